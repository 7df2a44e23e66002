/**
 * The diffusion service under hostile input, on the tiny random pipeline: valid text2img and img2img requests
 * with one to three places broken (a wrong type, an out-of-range value, a field gone), malformed, deep, huge and
 * non-ASCII bodies, broken multipart uploads and image bombs. The answer is a 200 or a 4xx with the one error
 * body (a stable `code`, no stack trace or server path), never a 5xx; the service keeps generating and logs no
 * error of its own. Requests go one at a time: the queue's 503 under load is its own test.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { writeTinyLora } from './service-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-hostile-'));
const loraDir = join(work, 'loras');
const logger = new MemoryLogger();
const LIMITS = { maxSize: 32, maxSteps: 3, maxImages: 2, maxPromptLength: 2000, maxLoras: 2 };

let text2img: ServerHandle;
let img2img: ServerHandle;

beforeAll(async () => {
  writeTinyLora(loraDir, 'style.safetensors', 'style');
  const common = { modelDir: tinyDir('sd1'), loraDir, backend: 'wasm' as const, limits: LIMITS, logger };
  const options = { port: 0, host: '127.0.0.1', logger, handleSignals: false, maxBodySize: 2 * 1024 * 1024 };
  text2img = await serve(createDiffusionService(common).service, options);
  img2img = await serve(createDiffusionService({ ...common, pipeline: 'img2img' }).service, options);
}, 120_000);

afterAll(async () => {
  await text2img?.close();
  await img2img?.close();
});

interface Answer {
  status: number;
  text: string;
}

async function answer(res: Response): Promise<Answer> {
  const type = res.headers.get('content-type') ?? '';
  // Images are not read as text; an error body always is JSON.
  const text = type.startsWith('application/json') ? await res.text() : '';
  if (!text) await res.arrayBuffer();
  return { status: res.status, text };
}

const post = (body: string | Uint8Array, type = 'application/json'): Promise<Response> =>
  fetch(`${text2img.url}/text2img`, { method: 'POST', body, headers: { 'content-type': type } });

const postJson = async (body: string | Uint8Array, type?: string): Promise<Answer> =>
  answer(await post(body, type));

const postForm = async (form: FormData): Promise<Answer> =>
  answer(await fetch(`${img2img.url}/img2img`, { method: 'POST', body: form }));

/** No 5xx; a 4xx carries the one error body and nothing of the server's insides. */
function expectClientAnswer(got: Answer, what: string): void {
  expect(got.status, `${what} → ${got.status} ${got.text.slice(0, 300)}`).toBeLessThan(500);
  if (got.status >= 400) {
    const body = JSON.parse(got.text) as { error?: unknown; code?: unknown };
    expect(typeof body.error, what).toBe('string');
    expect(body.code, what).toMatch(/^[A-Z_]+$/);
    expect(got.text, what).not.toMatch(/\n\s+at |node_modules|\/src\/|\.ts:\d|tiffin-sd-hostile/);
  }
}

/** Anything JSON holds, with the values that break numeric checks (NaN and ±∞ arrive as null). */
const anyJson = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    0.5,
    7,
    8.5,
    2 ** 31,
    2 ** 53,
    -(2 ** 63),
    1e308,
    '',
    '8',
    'é',
    '💥',
  ),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.array(fc.integer({ min: -2, max: 40 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);

/** A request the service accepts: every field in bounds, LoRAs named as the directory lists them. */
const validParameters = fc.record(
  {
    prompt: fc.string({ unit: 'binary', maxLength: 40 }),
    negative_prompt: fc.option(fc.string({ maxLength: 20 })),
    height: fc.constantFrom(8, 16, 24),
    width: fc.constantFrom(8, 16),
    num_inference_steps: fc.integer({ min: 1, max: 2 }),
    guidance_scale: fc.double({ min: 0, max: 50, noNaN: true }),
    eta: fc.double({ min: 0, max: 1, noNaN: true }),
    seed: fc.option(fc.integer({ min: 0, max: 2 ** 32 - 1 })),
    scheduler: fc.option(fc.constantFrom('ddim', 'pndm', 'euler', 'lms')),
    num_images_per_prompt: fc.constantFrom(1, 2),
    guidance_rescale: fc.double({ min: 0, max: 1, noNaN: true }),
    clip_skip: fc.integer({ min: 0, max: 2 }),
    lora_weights: fc.option(
      fc.oneof(fc.constant('style.safetensors'), fc.constant([{ path: 'style.safetensors', weight: 0.5 }])),
    ),
    strength: fc.double({ min: 0, max: 1, noNaN: true }),
  },
  { requiredKeys: ['prompt'] },
);

const DELETE = Symbol('delete');

/** Every place in a JSON value (object keys, array indices) as a path from the root. */
function placesIn(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const keys: Array<string | number> = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((k) => [
    [...prefix, k],
    ...placesIn((value as Record<string | number, unknown>)[k], [...prefix, k]),
  ]);
}

/** `value` with the place at `path` replaced by `replacement`, or removed. */
function withPlace(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (replacement !== DELETE) parent[last] = replacement;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return copy;
}

/** A valid request with up to three places broken. */
const brokenParameters = fc
  .tuple(
    validParameters,
    fc.array(fc.tuple(fc.nat(), fc.oneof(anyJson, fc.constant(DELETE))), { maxLength: 3 }),
  )
  .map(([valid, breaks]) => {
    let body: unknown = valid;
    for (const [at, replacement] of breaks) {
      const places = placesIn(body);
      if (places.length > 0) body = withPlace(body, places[at % places.length]!, replacement);
    }
    return body;
  });

/** A PNG signature and IHDR declaring `width`×`height`, then nothing: a decompression bomb's header. */
function pngHeader(width: number, height: number): Uint8Array {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr.set([8, 2, 0, 0, 0], 16);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
}

describe('POST /text2img under hostile input', () => {
  it('valid requests with up to three places broken: 200 or a 4xx, never a 5xx', async () => {
    let generated = 0;
    await fc.assert(
      fc.asyncProperty(brokenParameters, async (body) => {
        const got = await postJson(JSON.stringify(body));
        if (got.status === 200) generated++;
        expectClientAnswer(got, JSON.stringify(body).slice(0, 300));
      }),
      { numRuns: 120 },
    );
    // Some survived their breaks (a field dropped to its default): the property reached the generator.
    expect(generated).toBeGreaterThan(0);
  }, 120_000);

  it('malformed, deep, huge and non-ASCII bodies', async () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const cases: Array<[string, string | Uint8Array, string?]> = [
      ['empty', ''],
      ['not JSON', '{prompt: cat}'],
      ['truncated', '{"prompt":"a cat","height":1'],
      ['a list', '["a cat"]'],
      ['deep', `{"prompt":${deep(100_000)}}`],
      ['deep object', `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x70, 0xff, 0xfe, 0x22, 0x7d])],
      ['BOM', '\ufeff{"prompt":"a cat","height":8,"width":8,"num_inference_steps":1}'],
      ['a prompt of 1 MB', JSON.stringify({ prompt: 'cat '.repeat(256 * 1024), height: 8, width: 8 })],
      [
        'a prompt of control characters',
        JSON.stringify({ prompt: '\u0000\u0007\u001b[31m\u202e', width: 8 }),
      ],
      ['a prompt in many scripts', JSON.stringify({ prompt: '猫 كلب 🐈‍⬛ Ώ ﷽', height: 8, width: 8 })],
      ['a body over the limit', JSON.stringify({ prompt: 'x'.repeat(3 * 1024 * 1024) })],
      ['a wrong content type', '{"prompt":"a cat"}', 'text/plain'],
      ['a seed past 2^53', '{"prompt":"a cat","seed":123456789012345678901234567890}'],
    ];
    for (const [what, body, type] of cases) expectClientAnswer(await postJson(body, type), what);
  }, 120_000);
});

describe('the bounds hold for what a request leaves out or overdoes', () => {
  it('a request without num_inference_steps runs at most --max-steps (the default of 50 is lowered to it)', async () => {
    const res = await post(JSON.stringify({ prompt: 'a cat', height: 8, width: 8 }));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const requestId = res.headers.get('x-request-id');
    const steps = logger.records.filter((r) => r.msg === 'generation step' && r.requestId === requestId);
    expect(steps.map((r) => r.step)).toEqual([1, 2, 3]);
  });

  it('a prompt or negative prompt over the length limit is a 400 naming the field', async () => {
    for (const field of ['prompt', 'negative_prompt']) {
      const body = { prompt: 'a cat', height: 8, width: 8, [field]: 'cat '.repeat(501) };
      const got = await postJson(JSON.stringify(body));
      expect(got.status).toBe(400);
      expect(JSON.parse(got.text).error).toMatch(new RegExp(`(^|: )${field}: `));
    }
    const atLimit = await postJson(JSON.stringify({ prompt: 'x'.repeat(2000), height: 8, width: 8 }));
    expect(atLimit.status).toBe(200);
  });
});

describe('POST /img2img under hostile input', () => {
  it('broken uploads and parameters: never a 5xx', async () => {
    const form = (img: Uint8Array | null, data: string | null, type = 'application/json') => {
      const f = new FormData();
      if (img) f.set('img', new Blob([img], { type: 'image/png' }), 'in.png');
      if (data !== null) f.set('data', new Blob([data], { type }));
      return f;
    };
    const params = JSON.stringify({ prompt: 'a dog', num_inference_steps: 2, strength: 0.5 });
    const noise = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 512 }), { numRuns: 20, seed: 3 });
    const cases: Array<[string, FormData]> = [
      ['no image', form(null, params)],
      ['no parameters', form(pngHeader(16, 16), null)],
      ['an image bomb header', form(pngHeader(100_000, 100_000), params)],
      ['a zero-size image header', form(pngHeader(0, 0), params)],
      ['a truncated PNG', form(pngHeader(16, 16), params)],
      ['parameters not JSON', form(pngHeader(16, 16), '{prompt')],
      ['parameters as text', form(pngHeader(16, 16), params, 'text/plain')],
      ['strength out of range', form(pngHeader(16, 16), JSON.stringify({ prompt: 'x', strength: 2 }))],
      ...noise.map((bytes, i): [string, FormData] => [`noise ${i}`, form(bytes, params)]),
    ];
    for (const [what, body] of cases) expectClientAnswer(await postForm(body), what);
    const bare = await fetch(`${img2img.url}/img2img`, {
      method: 'POST',
      body: '--x\r\ncontent-disposition: form-data; name="img"\r\n\r\nabc',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    });
    expectClientAnswer(await answer(bare), 'unterminated multipart');
  }, 120_000);
});

describe('after all of it', () => {
  it('still generates, and logged no error of its own', async () => {
    const res = await post(
      JSON.stringify({ prompt: 'a cat', height: 16, width: 16, num_inference_steps: 2, seed: 1 }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const errors = logger.records.filter((r) => r.level === 'error');
    expect(errors.map((r) => `${r.msg}: ${String(r.error)}`)).toEqual([]);
  });
});
