import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';
import { pngImageData, writeTinyLora } from './service-helpers.js';

/**
 * The compatible APIs on the tiny pipeline: A1111's `<lora:name:weight>` applies a LoRA from the allowed folder
 * (and refuses one outside it), and `openaiApi` / `a1111Api` false leave their routes out.
 */
const work = mkdtempSync(join(tmpdir(), 'tiffin-sd-compat-'));
const loraDir = join(work, 'loras');
const logger = new MemoryLogger();
let on: ServerHandle;
let off: ServerHandle;

beforeAll(async () => {
  writeTinyLora(loraDir, 'style.safetensors', 'style');
  const common = { modelDir: tinyDir('sd1'), loraDir, backend: 'wasm' as const, logger };
  const options = { port: 0, host: '127.0.0.1', logger, handleSignals: false };
  on = await serve(createDiffusionService(common).service, options);
  off = await serve(
    createDiffusionService({ ...common, openaiApi: false, a1111Api: false }).service,
    options,
  );
}, 120_000);

afterAll(async () => {
  await on?.close();
  await off?.close();
});

const txt2img = async (server: ServerHandle, prompt: string) => {
  const res = await fetch(`${server.url}/sdapi/v1/txt2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, steps: 2, seed: 11, width: 32, height: 32 }),
  });
  return { status: res.status, body: (await res.json()) as { images?: string[]; detail?: string } };
};

const pixels = (b64: string | undefined) =>
  sharp(Buffer.from(b64 ?? '', 'base64'))
    .raw()
    .toBuffer();

describe('the compatible APIs', () => {
  it("applies A1111's <lora:name:weight> from the allowed folder only", async () => {
    const plain = await txt2img(on, 'a cat');
    const styled = await txt2img(on, 'a cat <lora:style:1>');
    const zero = await txt2img(on, 'a cat <lora:style:0>');
    expect([plain.status, styled.status, zero.status]).toEqual([200, 200, 200]);
    expect(styled.body.images?.[0]).not.toBe(plain.body.images?.[0]);
    // Weight 0 and the tag removed from the prompt: the plain image again (its pixels: the PNG's infotext names
    // the prompt as sent, tag included, as A1111 writes it).
    expect(await pixels(zero.body.images?.[0])).toEqual(await pixels(plain.body.images?.[0]));
    const outside = await txt2img(on, 'a cat <lora:../../../etc/passwd:1>');
    expect(outside.status).toBeGreaterThanOrEqual(400);
    expect(outside.status).toBeLessThan(500);
    expect(outside.body.detail).not.toContain(work);
  }, 120_000);

  it("reads A1111's prompt weighting: (word:1.0) is word, another weight another image", async () => {
    const pixels = async (prompt: string) => {
      const { status, body } = await txt2img(on, prompt);
      expect(status).toBe(200);
      return pngImageData(Buffer.from(body.images?.[0] ?? '', 'base64'));
    };
    const plain = await pixels('a cat, (dog)');
    expect((await pixels('a (cat:1.0), (dog)')).equals(plain)).toBe(true);
    expect((await pixels('a (cat:1.5), (dog)')).equals(plain)).toBe(false);
  });

  it('leaves the routes out when turned off', async () => {
    expect((await txt2img(off, 'a cat')).status).toBe(404);
    expect((await fetch(`${off.url}/v1/models`)).status).toBe(404);
    expect((await fetch(`${on.url}/v1/models`)).status).toBe(200);
  });
});
