import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { writeTinyControlNet } from '../../src/tiny/write-tiny-controlnet.js';
import { writeTinyPipeline } from '../../src/tiny/write-tiny-pipeline.js';

/**
 * A service's ControlNets beside `modelsDir` checkpoints of another shape (as `tiffin diffusion start demo
 * --models-dir` loads the demo's Canny net): a checkpoint the net does not fit (here a BK-SDM-tiny-shaped UNet, no
 * mid block) still generates, and a request that names the net with it is a 400 naming the field.
 */
const models = mkdtempSync(join(tmpdir(), 'tiffin-sd-checkpoint-controlnets-'));
const start = writeTinyPipeline(join(models, 'start'));
writeTinyPipeline(join(models, 'small'), { unetFamily: 'bk-sdm-tiny' });
const edges = writeTinyControlNet(join(mkdtempSync(join(tmpdir(), 'tiffin-sd-cn-')), 'edges'));
const logger = new MemoryLogger();
let server: ServerHandle;

beforeAll(async () => {
  const sd = createDiffusionService({
    modelDir: start,
    modelsDir: models,
    controlnets: { edges },
    backend: 'wasm',
    logger,
  });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger, handleSignals: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const map = async () =>
  (
    await sharp({ create: { width: 32, height: 32, channels: 3, background: '#000' } })
      .composite([
        {
          input: await sharp({ create: { width: 12, height: 12, channels: 3, background: '#fff' } })
            .png()
            .toBuffer(),
          left: 10,
          top: 10,
        },
      ])
      .png()
      .toBuffer()
  ).toString('base64');

async function text2img(body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      prompt: 'a cat',
      seed: 3,
      num_inference_steps: 2,
      height: 32,
      width: 32,
      output_format: 'png',
      ...body,
    }),
  });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

describe('ControlNets and --models-dir checkpoints they do not fit', () => {
  it('guides the start model, generates on the other checkpoint, and refuses the net there with a 400', async () => {
    const unit = { model: 'edges', module: 'none', image: await map() };
    expect((await text2img({ controlnet: [unit] })).status).toBe(200);
    const plain = await text2img({ model: 'small' });
    expect(plain.status).toBe(200);
    const refused = await text2img({ model: 'small', controlnet: [unit] });
    expect(refused.status).toBe(400);
    const error = JSON.parse(refused.body.toString('utf8')) as { code: string; error: string };
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.error).toContain('controlnet');
    expect(error.error).not.toMatch(/\/tmp|\.json/);
    // The start model still takes it after the switch.
    expect((await text2img({ model: 'start', controlnet: [unit] })).status).toBe(200);
  }, 120_000);
});
