import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerHandle, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { writeSd15RandomPipeline } from '../../src/tiny/sd15-random.js';
import { jpegSize } from '../service/service-helpers.js';

/**
 * An SD1.5-shaped model (random F16 weights, the real configs) served over HTTP on onnxruntime at
 * a small size: graphs built from the folder on the first start and taken from the cache on the
 * second. Run with `pnpm test:sd15` (set TIFFIN_SD15_DIR to keep the written model between runs).
 */
const keep = process.env.TIFFIN_SD15_DIR;
const modelDir = keep ?? mkdtempSync(join(tmpdir(), 'tiffin-sd15-'));
const cacheDir = mkdtempSync(join(tmpdir(), 'tiffin-sd15-graphs-'));
const figures: string[] = [];
let handle: ServerHandle | undefined;

async function start(): Promise<{ ms: number }> {
  const t0 = performance.now();
  const sd = createDiffusionService({ modelDir, backend: 'onnxruntime', maxQueue: 1 });
  handle = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
  // Ready once the worker has loaded the model.
  for (;;) {
    const r = await fetch(`${handle.url}/readyz`);
    if (r.status === 200) break;
    await new Promise((res) => setTimeout(res, 500));
  }
  return { ms: performance.now() - t0 };
}

beforeAll(() => {
  process.env.TIFFIN_ONNX_CACHE = cacheDir;
  if (!existsSync(join(modelDir, 'model_index.json'))) writeSd15RandomPipeline(modelDir);
});

afterAll(async () => {
  await handle?.close();
  rmSync(cacheDir, { recursive: true, force: true });
  if (!keep) rmSync(modelDir, { recursive: true, force: true });
  console.info(`[sd15 onnxruntime figures]\n  ${figures.join('\n  ')}`);
});

describe('SD1.5-shaped model on onnxruntime, end to end', () => {
  it('serves text2img at 64×64; a second start takes the graphs from the cache', async () => {
    const first = await start();
    figures.push(`first start (graphs built): ${(first.ms / 1000).toFixed(1)} s`);
    const t0 = performance.now();
    const res = await fetch(`${handle?.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: 'a photo of a cat',
        height: 64,
        width: 64,
        num_inference_steps: 2,
        seed: 1,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const jpeg = new Uint8Array(await res.arrayBuffer());
    expect(jpegSize(jpeg)).toEqual({ width: 64, height: 64 });
    figures.push(`text2img 64×64, 2 steps: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await handle?.close();
    const second = await start();
    figures.push(`second start (graphs from cache): ${(second.ms / 1000).toFixed(1)} s`);
    const again = await fetch(`${handle?.url}/text2img`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt: 'a photo of a cat',
        height: 64,
        width: 64,
        num_inference_steps: 2,
        seed: 1,
      }),
    });
    expect(Buffer.from(new Uint8Array(await again.arrayBuffer())).equals(Buffer.from(jpeg))).toBe(true);
  });
});
