import { demoControlNetDir, readScene } from '@tiffin/demo-model';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlNetsFor } from '../src/diffusion/model-resolution.js';
import { type CollectedProcess, spawnDemo } from './cli-process.js';

/**
 * `tiffin diffusion start demo` loads the demo's Canny ControlNet as `canny`: a picture the demo drew, sent with
 * `module: "canny"`, moves the shape a prompt asks for in the centre to the picture's place (the net follows the map's
place and size; its shape only sometimes: the demo's README "ControlNet").
 */
let proc: CollectedProcess;
let url = '';
beforeAll(async () => {
  proc = spawnDemo(['--tasks', 'memory']);
  url = await proc.url;
}, 120_000);
afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

async function text2img(body: Record<string, unknown>): Promise<Buffer> {
  const res = await fetch(`${url}/text2img`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ output_format: 'png', ...body }),
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function scene(png: Buffer) {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return readScene({ width: info.width, height: info.height, data: new Uint8Array(data) });
}

describe('tiffin diffusion start demo: the demo ControlNet', () => {
  it('is loaded as canny unless --controlnet canny=… names another; other --controlnet names add to it', () => {
    expect(controlNetsFor('demo', undefined)).toEqual([['canny', demoControlNetDir()]]);
    expect(controlNetsFor('demo', [['depth', './d']])).toEqual([
      ['canny', demoControlNetDir()],
      ['depth', './d'],
    ]);
    expect(controlNetsFor('demo', [['canny', './mine']])).toEqual([['canny', './mine']]);
    expect(controlNetsFor('stable-diffusion', undefined)).toEqual([]);
  });

  it('guides with module "canny": the edges of a blue square at the bottom right move the red circle there', async () => {
    const models = (await (await fetch(`${url}/models`)).json()) as { controlnets?: string[] };
    expect(models.controlnets).toEqual(['canny']);
    const source = await text2img({
      prompt: 'a large blue square at the bottom right on a black background',
      seed: 3,
    });
    expect(await scene(source)).toMatchObject({ shape: 'square', position: 'bottom right' });
    const prompt = 'a large red circle in the centre on a white background';
    expect(await scene(await text2img({ prompt, seed: 1 }))).toMatchObject({
      shape: 'circle',
      position: 'centre',
    });
    const guided = await text2img({
      prompt,
      seed: 1,
      controlnet: [{ model: 'canny', module: 'canny', image: source.toString('base64') }],
    });
    expect(await scene(guided)).toMatchObject({
      position: 'bottom right',
      colour: 'red',
      background: 'white',
    });
  });
});
