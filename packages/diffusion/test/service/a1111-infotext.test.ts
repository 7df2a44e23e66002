import { deflateSync } from 'node:zlib';
import { UnprocessableEntity } from '@tiffin/core';
import fc from 'fast-check';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import {
  A1111_SAMPLER_LIST,
  isServed,
  resolveSampler,
  samplerListing,
  servedSamplers,
} from '../../src/service/compat/a1111/samplers.js';
import { infotext, parseInfotext } from '../../src/service/infotext.js';
import { readPngText, withPngText } from '../../src/service/png-text.js';

/**
 * A1111's infotext as its tools read it (the text A1111 writes, its parser's fields), the PNG text chunks it travels
 * in (written by Tiffin, read back by sharp/libpng and by `png-info`'s reader, which refuses hostile PNGs with a
 * 422), and A1111's sampler names in both of its forms.
 */
const fields = {
  prompt: 'a red circle, (best:1.2)',
  negativePrompt: 'blue',
  steps: 20,
  sampler: 'DPM++ 2M',
  scheduleType: 'Karras',
  cfgScale: 7,
  seed: 1,
  width: 512,
  height: 512,
  modelHash: '0123456789',
  model: 'tiny-sd',
  denoisingStrength: null,
};

const png = () =>
  sharp({ create: { width: 8, height: 8, channels: 3, background: '#c02020' } })
    .png()
    .toBuffer();

/** A PNG chunk of `type` with `data` (CRC left zero: the reader does not need it). */
function chunk(type: string, data: Buffer, declared = data.length): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(declared, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, data, Buffer.alloc(4)]);
}
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe("A1111's infotext", () => {
  it("is written in A1111's format and parsed back into A1111's png-info fields", () => {
    const text = infotext(fields);
    expect(text).toBe(
      'a red circle, (best:1.2)\nNegative prompt: blue\nSteps: 20, Sampler: DPM++ 2M, Schedule type: Karras, CFG scale: 7, Seed: 1, Size: 512x512, Model hash: 0123456789, Model: tiny-sd',
    );
    expect(parseInfotext(text)).toEqual({
      Prompt: 'a red circle, (best:1.2)',
      'Negative prompt': 'blue',
      Steps: '20',
      Sampler: 'DPM++ 2M',
      'Schedule type': 'Karras',
      'CFG scale': '7',
      Seed: '1',
      'Size-1': '512',
      'Size-2': '512',
      'Model hash': '0123456789',
      Model: 'tiny-sd',
    });
    // No negative prompt: no line for it; a value with a comma or colon is quoted, and unquoted when read.
    const quoted = infotext({ ...fields, negativePrompt: '', model: 'a, b: c' });
    expect(quoted).not.toContain('Negative prompt');
    expect(quoted).toContain('Model: "a, b: c"');
    expect(parseInfotext(quoted).Model).toBe('a, b: c');
  });

  it('never throws on any text and keeps a `__proto__` key a key', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        expect(typeof parseInfotext(text).Prompt).toBe('string');
      }),
    );
    const parsed = parseInfotext('x\nSteps: 1, __proto__: 2, Seed: 3');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toBe('2');
  });
});

describe('PNG text chunks', () => {
  it('round-trip as tEXt (ASCII) or UTF-8 iTXt (anything else), and the PNG still decodes', async () => {
    const written = withPngText(await png(), { parameters: 'a cat', other: 'ünïcödé ✓ 猫' });
    expect(readPngText(written)).toEqual({ parameters: 'a cat', other: 'ünïcödé ✓ 猫' });
    const meta = await sharp(written).metadata();
    expect([meta.width, meta.format]).toEqual([8, 'png']);
    expect(meta.comments).toEqual([
      { keyword: 'parameters', text: 'a cat' },
      { keyword: 'other', text: 'ünïcödé ✓ 猫' },
    ]);
  });

  it('reads zTXt and compressed iTXt within the text budget', async () => {
    const base = await png();
    const body = base.subarray(8);
    const z = chunk('zTXt', Buffer.concat([Buffer.from('parameters\0\0'), deflateSync('zipped')]));
    expect(readPngText(Buffer.concat([SIGNATURE, z, body]))).toEqual({ parameters: 'zipped' });
    const bomb = chunk(
      'zTXt',
      Buffer.concat([Buffer.from('k\0\0'), deflateSync(Buffer.alloc(64 * 1024 * 1024))]),
    );
    expect(() => readPngText(Buffer.concat([SIGNATURE, bomb, body]))).toThrow(UnprocessableEntity);
  });

  it('refuses hostile PNGs with a 422, never more work than the bounds', async () => {
    const base = await png();
    const cases = [
      Buffer.from('not a png at all'),
      base.subarray(0, 20),
      Buffer.concat([SIGNATURE, chunk('tEXt', Buffer.from('k\0v'), 0x7fffffff)]),
      Buffer.concat([SIGNATURE, chunk('tEXt', Buffer.from('no keyword separator'))]),
      Buffer.concat([SIGNATURE, chunk('iTXt', Buffer.from('k\0\0\0'))]),
      Buffer.concat([SIGNATURE, ...Array.from({ length: 5000 }, () => chunk('abCd', Buffer.alloc(0)))]),
    ];
    for (const bytes of cases) expect(() => readPngText(bytes)).toThrow(UnprocessableEntity);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (tail) => {
        try {
          readPngText(Buffer.concat([SIGNATURE, tail]));
        } catch (err) {
          expect(err).toBeInstanceOf(UnprocessableEntity);
        }
      }),
    );
  });
});

describe("A1111's sampler names", () => {
  it('takes the 1.9+ form, the older one with the schedule in the name, and aliases', () => {
    expect(resolveSampler('DPM++ 2M', 'Karras')).toMatchObject({ scheduler: 'dpmpp_2m', karras: true });
    expect(resolveSampler('DPM++ 2M Karras', '')).toMatchObject({ scheduler: 'dpmpp_2m', karras: true });
    // Automatic is the sampler's own default schedule, as in A1111 1.9+ (Karras for DPM++ 2M).
    expect(resolveSampler('DPM++ 2M', 'Automatic')).toMatchObject({ scheduleLabel: 'Karras', karras: true });
    expect(resolveSampler('Euler', '')).toMatchObject({ scheduler: 'euler', karras: false });
    expect(resolveSampler('k_euler_a', '')).toMatchObject({ samplerName: 'Euler a', karras: null });
    expect(resolveSampler('', '')).toBeUndefined();
    expect(samplerListing().map((x) => x.name)).toEqual(
      expect.arrayContaining(['Euler a', 'DPM++ 2M', 'DPM++ 2M Karras', 'DDIM', 'PLMS', 'LCM']),
    );
  });

  it('refuses, naming it and the served ones, a sampler whose scheduler Tiffin does not run', () => {
    const served = servedSamplers().map((x) => x.name);
    // The samplers whose scheduler this package does not implement (yet), whichever they are today.
    const notYet = A1111_SAMPLER_LIST.filter((x) => !isServed(x)).map((x) => [x.name, '']);
    expect(notYet.map(([name]) => name)).toEqual(
      expect.arrayContaining(['DPM fast', 'DPM adaptive', 'Restart']),
    );
    for (const [name, schedule] of [
      ...notYet,
      ['Euler a', 'Karras'],
      ['Euler', 'Beta'],
      ['No Such Sampler', ''],
      ['Euler', 'No such schedule'],
    ]) {
      let error: unknown;
      try {
        resolveSampler(name, schedule);
      } catch (err) {
        error = err;
      }
      expect(error, name).toBeInstanceOf(UnprocessableEntity);
      const refused = error as UnprocessableEntity;
      expect(refused.code).toBe('SAMPLER_NOT_SERVED');
      expect(refused.message).toContain(served.join(', '));
    }
  });
});
