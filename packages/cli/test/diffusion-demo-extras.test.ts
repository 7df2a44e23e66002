import { readScene } from '@tiffin/demo-model';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnDemo } from './cli-process.js';

/**
 * What the demo ships beside its model, as a user tries it offline with `tiffin diffusion start demo --vae-tiny
 * demo`: its swap-red-blue LoRA by `lora_weights` and by A1111's `<lora:…>` tag, `decoder: "tiny"`, and the words
 * of a prompt the model ignores, named in a header and in the job's step events.
 */
let proc: CollectedProcess;
let url = '';
beforeAll(async () => {
  proc = spawnDemo(['--vae-tiny', 'demo', '--tasks', 'memory']);
  url = await proc.url;
}, 120_000);
afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

const RED_CIRCLE = 'a large red circle in the centre on a white background';

const post = (path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function scene(image: Buffer) {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height]).toEqual([64, 64]);
  return readScene({ width: 64, height: 64, data: new Uint8Array(data) });
}

async function text2img(body: Record<string, unknown>) {
  const res = await post('/text2img', { prompt: RED_CIRCLE, seed: 0, decoder: 'full', ...body });
  expect(res.status).toBe(200);
  return { res, scene: await scene(Buffer.from(await res.arrayBuffer())) };
}

describe('tiffin diffusion start demo --vae-tiny demo: the demo extras', () => {
  it('lora_weights swap-red-blue.safetensors turns the red circle blue, and <lora:swap-red-blue:1> on the A1111 route does too', async () => {
    expect((await text2img({})).scene).toMatchObject({ colour: 'red', shape: 'circle', background: 'white' });
    const shifted = await text2img({ lora_weights: 'swap-red-blue.safetensors' });
    expect(shifted.scene).toMatchObject({ colour: 'blue', shape: 'circle', background: 'white' });
    expect(await (await fetch(`${url}/loras`)).json()).toMatchObject({
      loras: [{ name: 'swap-red-blue.safetensors' }],
    });

    const a1111 = await post('/sdapi/v1/txt2img', {
      prompt: `${RED_CIRCLE} <lora:swap-red-blue:1>`,
      steps: 20,
      cfg_scale: 1.5,
      width: 64,
      height: 64,
      seed: 0,
    });
    const answer = (await a1111.json()) as { images: string[] };
    expect(a1111.status).toBe(200);
    expect(await scene(Buffer.from(answer.images[0]!, 'base64'))).toMatchObject({ colour: 'blue' });
  });

  it('decoder "tiny" (the default with --vae-tiny) returns the picture from the tiny decoder', async () => {
    const raw = async (body: Record<string, unknown>) => {
      const res = await post('/text2img', { prompt: RED_CIRCLE, seed: 0, output_format: 'png', ...body });
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const tiny = await raw({ decoder: 'tiny' });
    expect(await scene(tiny)).toMatchObject({ colour: 'red', background: 'white' });
    const pixels = (png: Buffer) => sharp(png).raw().toBuffer();
    expect(await pixels(await raw({}))).toEqual(await pixels(tiny));
    expect(await pixels(await raw({ decoder: 'full' }))).not.toEqual(await pixels(tiny));
  });

  it('names the words the model ignores: a percent-encoded header, and ignored_words in a job’s step events', async () => {
    const { res } = await text2img({
      prompt: 'a large red dog in the centre on a white background, (très:1.2) red',
    });
    expect(res.headers.get('tiffin-ignored-words')).toBe('dog,tr%C3%A8s');
    expect((await text2img({})).res.headers.get('tiffin-ignored-words')).toBeNull();

    const submitted = await post('/text2img/submit', {
      prompt: 'a unicorn',
      num_inference_steps: 2,
      seed: 1,
    });
    const { id } = (await submitted.json()) as { id: string };
    const events = await (await fetch(`${url}/text2img/events?id=${id}`)).text();
    const steps = events.split('\n\n').filter((e) => e.startsWith('event: step'));
    expect(steps.length).toBeGreaterThan(0);
    for (const step of steps)
      expect(JSON.parse(step.split('data: ')[1]!)).toMatchObject({ ignored_words: ['unicorn'] });
    const result = await fetch(`${url}/text2img/get?id=${id}`);
    expect(result.headers.get('tiffin-ignored-words')).toBe('unicorn');
  });
});
