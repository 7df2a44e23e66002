import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CollectedProcess, spawnTiffin } from './cli-process.js';

/**
 * AUTOMATIC1111-style requests, as its documented API clients send them, to `tiffin diffusion start demo`:
 * txt2img and img2img answer base64 PNGs with an `info` whose seed reproduces the image; `progress` moves during
 * a job and `interrupt` stops it; hostile bodies are 4xx, never 5xx.
 */
let proc: CollectedProcess;
let url = '';

beforeAll(async () => {
  proc = spawnTiffin(['diffusion', 'start', 'demo', '--port', '0'], {
    TIFFIN_TF_BACKEND: 'onnxruntime',
    TIFFIN_HOME: mkdtempSync(join(tmpdir(), 'tiffin-cli-home-')),
  });
  url = await proc.url;
}, 120_000);

afterAll(async () => {
  proc?.child.kill('SIGTERM');
  await proc?.done;
});

const post = (path: string, body: unknown) =>
  fetch(`${url}/sdapi/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

interface Answer {
  images: string[];
  parameters: Record<string, unknown>;
  info: string;
}

async function generated(res: Response): Promise<Answer> {
  const answer = (await res.json()) as Answer;
  expect(res.status, JSON.stringify(answer).slice(0, 300)).toBe(200);
  return answer;
}

const pixels = (b64: string) => sharp(Buffer.from(b64, 'base64')).raw().toBuffer();

describe("AUTOMATIC1111's API on tiffin diffusion start demo", () => {
  it('txt2img answers base64 PNGs whose info seeds reproduce them', async () => {
    const body = {
      prompt: 'a red circle',
      negative_prompt: 'blue',
      steps: 8,
      cfg_scale: 1.5,
      width: 64,
      height: 48,
      seed: -1,
      sampler_name: 'Euler a',
      batch_size: 2,
      n_iter: 1,
      restore_faces: false,
    };
    const first = await generated(await post('txt2img', body));
    expect(first.images).toHaveLength(2);
    for (const image of first.images)
      expect(await sharp(Buffer.from(image, 'base64')).metadata()).toMatchObject({
        format: 'png',
        width: 64,
        height: 48,
      });
    const info = JSON.parse(first.info) as { seed: number; all_seeds: number[]; sampler_name: string };
    expect(info.all_seeds).toEqual([info.seed, info.seed + 1]);
    expect(info.sampler_name).toBe('Euler a');
    expect(first.parameters).toMatchObject({ prompt: 'a red circle', steps: 8, seed: -1 });
    // The second image's seed alone gives the second image again.
    const again = await generated(await post('txt2img', { ...body, seed: info.all_seeds[1], batch_size: 1 }));
    expect((await pixels(again.images[0])).equals(await pixels(first.images[1]))).toBe(true);
  }, 120_000);

  it('img2img and inpainting take init_images and mask', async () => {
    const init = (
      await sharp({ create: { width: 64, height: 64, channels: 3, background: '#c02020' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const mask = (
      await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ffffff' } })
        .png()
        .toBuffer()
    ).toString('base64');
    const common = {
      prompt: 'a blue square',
      steps: 6,
      seed: 3,
      denoising_strength: 0.6,
      sampler_name: 'DDIM',
    };
    const plain = await generated(
      await post('img2img', { ...common, init_images: [`data:image/png;base64,${init}`] }),
    );
    expect(plain.images).toHaveLength(1);
    const masked = await generated(await post('img2img', { ...common, init_images: [init], mask }));
    expect(await sharp(Buffer.from(masked.images[0], 'base64')).metadata()).toMatchObject({ format: 'png' });
  }, 120_000);

  it('progress moves during a job, naming the words the model ignores, and interrupt stops it', async () => {
    // "dog" is outside the demo's vocabulary (its embedding row is zeros): named, as the native routes name it.
    const prompt = 'a large red dog in the centre <lora:swap-red-blue:0.5>';
    const job = post('txt2img', { prompt, steps: 60, n_iter: 8, seed: 1 });
    let seen = 0;
    for (let i = 0; i < 400 && seen === 0; i++) {
      const p = (await (await fetch(`${url}/sdapi/v1/progress`)).json()) as {
        progress: number;
        state: { sampling_step: number };
        current_image: string | null;
        ignored_words: string[];
      };
      if (p.progress > 0 && p.state.sampling_step > 0) {
        seen = p.progress;
        expect(p.current_image === null || typeof p.current_image === 'string').toBe(true);
        expect(p.ignored_words).toEqual(['dog']);
      } else await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toBeGreaterThan(0);
    expect((await post('interrupt', {})).status).toBe(200);
    const res = await job;
    expect(res.headers.get('tiffin-ignored-words')).toBe('dog');
    const answer = await generated(res);
    expect(JSON.parse(answer.info)).toMatchObject({ ignored_words: ['dog'] });
    // Stopped before all 8 generations: fewer images than asked.
    expect(answer.images.length).toBeLessThan(8);
    const idle = (await (await fetch(`${url}/sdapi/v1/progress`)).json()) as { progress: number };
    expect(idle.progress).toBe(0);
  }, 120_000);

  it('lists samplers, models, LoRAs and options', async () => {
    const samplers = (await (await fetch(`${url}/sdapi/v1/samplers`)).json()) as Array<{ name: string }>;
    expect(samplers.map((s) => s.name)).toEqual(
      expect.arrayContaining(['Euler a', 'Euler', 'DPM++ 2M Karras', 'LCM', 'DDIM']),
    );
    expect(((await (await fetch(`${url}/sdapi/v1/sd-models`)).json()) as unknown[]).length).toBe(1);
    expect(Array.isArray(await (await fetch(`${url}/sdapi/v1/loras`)).json())).toBe(true);
    expect(await (await fetch(`${url}/sdapi/v1/options`)).json()).toHaveProperty('sd_model_checkpoint');
    // Settings it honours are set; another model is refused (A1111 has no such model either).
    expect((await post('options', { samples_format: 'png' })).status).toBe(200);
    expect((await post('options', { sd_model_checkpoint: 'x' })).status).toBe(422);
  });

  it('answers hostile bodies with a 4xx, never a 5xx', async () => {
    const cases: Array<[string, unknown]> = [
      ['txt2img', '{"prompt": '],
      ['txt2img', '[]'],
      ['txt2img', { prompt: 'x', steps: 1e9 }],
      ['txt2img', { prompt: 'x', width: 99999, height: 8 }],
      ['txt2img', { prompt: 'x', sampler_name: 'No Such Sampler' }],
      ['txt2img', { prompt: 'x', n_iter: 1e6 }],
      ['txt2img', { prompt: 'x', seed: 'abc' }],
      ['txt2img', { prompt: 'x <lora:../../etc/passwd:1>' }],
      ['txt2img', { prompt: 'é'.repeat(20_000) }],
      ['img2img', { prompt: 'x', init_images: ['bm90IGFuIGltYWdl'] }],
      ['img2img', { prompt: 'x', init_images: [] }],
      ['img2img', { prompt: 'x', init_images: [42] }],
    ];
    for (const [path, body] of cases) {
      const res = await post(path, body);
      const answer = (await res.json()) as { detail: string };
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(typeof answer.detail).toBe('string');
      expect(JSON.stringify(answer)).not.toMatch(/\/work\/|node_modules|\/tmp\//);
    }
  });
});
