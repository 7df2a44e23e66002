import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { encodeBmp } from '@tiffin/io-image';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cannyEdges } from '../../../src/service/controlnet/canny.js';
import { createDiffusionService } from '../../../src/service/diffusion-service.js';
import { writeTinyControlNet } from '../../../src/tiny/write-tiny-controlnet.js';
import { writeTinyPipeline } from '../../../src/tiny/write-tiny-pipeline.js';
import { pngImageData } from '../service-helpers.js';

/**
 * The service's ControlNet surface over HTTP on the tiny model: the `controlnet` field in /docs.json, the
 * listings (`GET /models`, the extension's `/controlnet/*`) and what a request gets wrong, answered 400 (A1111: 422)
 * with a code and the field's name; then a service with two tiny ControlNets (deterministic weights): a unit reaches
 * the engine (scale 0 is the plain image, scale 1 is not), the same request gives the same bytes, and the A1111
 * route's units give the native route's image.
 */
const dirs: string[] = [];
let plain: ServerHandle;
let guided: ServerHandle;

const unit = { model: 'edges', image: Buffer.from('not a picture').toString('base64') };

beforeAll(async () => {
  const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-controlnet-service-')));
  dirs.push(dir);
  const sd = createDiffusionService({ modelDir: dir, logger: new MemoryLogger() });
  plain = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
  const edges = writeTinyControlNet(mkdtempSync(join(tmpdir(), 'tiffin-controlnet-a-')), { seed: 'a' });
  const depth = writeTinyControlNet(mkdtempSync(join(tmpdir(), 'tiffin-controlnet-b-')), { seed: 'b' });
  dirs.push(edges, depth);
  const withNets = createDiffusionService({
    modelDir: dir,
    controlnets: { edges, depth },
    logger: new MemoryLogger(),
  });
  guided = await serve(withNets.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 180_000);

afterAll(async () => {
  await plain?.close();
  await guided?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a service without ControlNets', () => {
  it('documents the controlnet field of every kind and lists no ControlNet', async () => {
    const doc = JSON.stringify(await (await fetch(`${plain.url}/docs.json`)).json());
    expect(doc).toContain('conditioning_scale');
    expect(doc).toContain('guidance_end');
    expect(
      ((await (await fetch(`${plain.url}/models`)).json()) as { controlnets: string[] }).controlnets,
    ).toEqual([]);
    expect(await (await fetch(`${plain.url}/controlnet/model_list`)).json()).toEqual({ model_list: [] });
    const modules = (await (await fetch(`${plain.url}/controlnet/module_list`)).json()) as {
      module_list: string[];
    };
    expect(modules.module_list).toEqual(['none', 'canny']);
    expect(await (await fetch(`${plain.url}/controlnet/version`)).json()).toEqual({ version: 2 });
  });

  it('answers a request with units 400, naming the field, and bad units by their schema', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ prompt: 'x', controlnet: [unit] }, /^controlnet: this service has no ControlNet loaded/],
      [{ prompt: 'x', controlnet: [{ ...unit, module: 'openpose' }] }, /module/],
      [{ prompt: 'x', controlnet: [{ ...unit, guidance_start: 0.9, guidance_end: 0.1 }] }, /guidance_end/],
      [{ prompt: 'x', controlnet: Array(5).fill(unit) }, /controlnet/],
      [{ prompt: 'x', controlnet: [{ image: unit.image }] }, /model/],
    ];
    for (const [body, message] of cases) {
      const res = await post(`${plain.url}/text2img`, body);
      expect(res.status, String(message)).toBe(400);
      const answer = (await res.json()) as { error: string; code: string };
      expect(answer.code).toMatch(/^[A-Z_]+$/);
      expect(answer.error).toMatch(message);
    }
  });

  it("answers A1111's txt2img with an enabled unit 422 in A1111's shape", async () => {
    const res = await post(`${plain.url}/sdapi/v1/txt2img`, {
      prompt: 'x',
      steps: 1,
      alwayson_scripts: { controlnet: { args: [{ model: 'edges', module: 'canny', image: unit.image }] } },
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /alwayson_scripts\.controlnet\.args\[0\]\.model: unknown ControlNet "edges"/,
    );
  });
});

/** A 32×32 picture with a bright disc: the Canny module finds its rim. */
async function disc(): Promise<string> {
  const raw = new Uint8Array(32 * 32 * 3);
  for (let y = 0; y < 32; y++)
    for (let x = 0; x < 32; x++)
      raw.set((x - 15) ** 2 + (y - 17) ** 2 < 81 ? [240, 220, 60] : [20, 40 + x, 90], 3 * (y * 32 + x));
  return (
    await sharp(raw, { raw: { width: 32, height: 32, channels: 3 } })
      .png()
      .toBuffer()
  ).toString('base64');
}

const generation = {
  prompt: 'a red cat',
  num_inference_steps: 2,
  guidance_scale: 2,
  seed: 7,
  height: 32,
  width: 32,
};

async function png(url: string, body: unknown): Promise<Buffer> {
  const res = await post(url, { ...(body as object), output_format: 'png' });
  expect(
    res.status,
    await res
      .clone()
      .text()
      .then((t) => t.slice(0, 200)),
  ).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('POST /controlnet/detect', () => {
  it("answers each picture's Canny map as a PNG, as the module makes it, and 422 for what it cannot run", async () => {
    const image = await disc();
    const res = await post(`${plain.url}/controlnet/detect`, {
      controlnet_module: 'canny',
      controlnet_input_images: [image, `data:image/png;base64,${image}`],
      controlnet_threshold_a: 60,
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { images: string[]; info: string };
    expect(answer.info).toBe('Success');
    const picture = await sharp(Buffer.from(image, 'base64')).raw().toBuffer({ resolveWithObject: true });
    const expected = cannyEdges({ width: 32, height: 32, data: new Uint8Array(picture.data) }, 60, 200);
    for (const png of answer.images) {
      const map = await sharp(Buffer.from(png, 'base64')).raw().toBuffer();
      expect(new Uint8Array(map)).toEqual(expected.data);
    }
    expect(expected.data.some((v) => v === 255)).toBe(true);
    for (const body of [
      { controlnet_module: 'openpose', controlnet_input_images: [image] },
      { controlnet_module: 'canny', controlnet_input_images: [] },
      { controlnet_module: 'canny', controlnet_input_images: [unit.image] },
    ]) {
      const refused = await post(`${plain.url}/controlnet/detect`, body);
      expect(refused.status).toBe(422);
    }
  });
});

describe('a service with ControlNets', () => {
  it('lists them by name', async () => {
    expect(
      ((await (await fetch(`${guided.url}/models`)).json()) as { controlnets: string[] }).controlnets,
    ).toEqual(['edges', 'depth']);
    expect(await (await fetch(`${guided.url}/controlnet/model_list`)).json()).toEqual({
      model_list: ['edges', 'depth'],
    });
  });

  it('guides text2img: scale 0 is the plain image, scale 1 another; the same request twice, the same bytes', async () => {
    const image = await disc();
    const url = `${guided.url}/text2img`;
    const bare = await png(url, generation);
    const off = await png(url, {
      ...generation,
      controlnet: [{ model: 'edges', image, module: 'canny', conditioning_scale: 0 }],
    });
    const on = { ...generation, controlnet: [{ model: 'edges', image, module: 'canny' }] };
    const first = await png(url, on);
    const second = await png(url, on);
    expect(pngImageData(off).equals(pngImageData(bare))).toBe(true);
    expect(pngImageData(first).equals(pngImageData(bare))).toBe(false);
    expect(second.equals(first)).toBe(true);
    // Two at once, with a window: another image again.
    const both = await png(url, {
      ...generation,
      controlnet: [
        { model: 'edges', image, module: 'canny' },
        { model: 'depth', image, guidance_start: 0.5, conditioning_scale: 0.8 },
      ],
    });
    expect(pngImageData(both).equals(pngImageData(first))).toBe(false);
  });

  it('guides img2img through the data part of its multipart body', async () => {
    const raw = new Uint8Array(32 * 32 * 3).map((_, i) => (i * 37) % 256);
    const picture = Buffer.from(encodeBmp(raw, 32, 32));
    const send = async (controlnet: unknown) => {
      const form = new FormData();
      form.set('img', new Blob([new Uint8Array(picture)], { type: 'image/bmp' }), 'img.bmp');
      const data = {
        prompt: 'a cat',
        num_inference_steps: 2,
        seed: 3,
        strength: 0.8,
        output_format: 'png',
        controlnet,
      };
      form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
      const res = await fetch(`${guided.url}/img2img`, { method: 'POST', body: form });
      expect(res.status).toBe(200);
      return pngImageData(Buffer.from(await res.arrayBuffer()));
    };
    const image = await disc();
    expect((await send([{ model: 'edges', image }])).equals(await send(null))).toBe(false);
  });

  it('answers an unknown model and a non-image 400, naming the field', async () => {
    const image = await disc();
    const cases: Array<[unknown, string, RegExp]> = [
      [
        [{ model: 'pose', image }],
        'INVALID_VALUE',
        /^controlnet\[0\]\.model: unknown ControlNet "pose" \(this service has edges, depth\)/,
      ],
      [
        [
          { model: 'edges', image },
          { model: 'depth', image: unit.image },
        ],
        'INVALID_IMAGE',
        /^controlnet\[1\]\.image is not a PNG, JPEG or WebP image/,
      ],
      [
        [{ model: 'edges', image: 'not base64 at all!' }],
        'INVALID_IMAGE',
        /^controlnet\[0\]\.image must be a base64/,
      ],
    ];
    for (const [controlnet, code, message] of cases) {
      const res = await post(`${guided.url}/text2img`, { ...generation, controlnet });
      expect(res.status, String(message)).toBe(400);
      expect(await res.json()).toMatchObject({ code, error: expect.stringMatching(message) });
    }
  });

  it("gives A1111's txt2img with an alwayson_scripts unit the native route's image", async () => {
    const image = await disc();
    const native = await png(`${guided.url}/text2img`, {
      ...generation,
      controlnet: [{ model: 'edges', image, module: 'canny', conditioning_scale: 0.9, low_threshold: 80 }],
    });
    const res = await post(`${guided.url}/sdapi/v1/txt2img`, {
      prompt: generation.prompt,
      steps: 2,
      cfg_scale: 2,
      seed: 7,
      width: 32,
      height: 32,
      alwayson_scripts: {
        controlnet: {
          args: [
            {
              enabled: true,
              module: 'canny',
              model: 'edges [0123abcd]',
              weight: 0.9,
              image,
              threshold_a: 80,
              // The native route's map: made at the generation's size.
              pixel_perfect: true,
            },
          ],
        },
      },
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { images: string[] };
    expect(pngImageData(Buffer.from(answer.images[0], 'base64')).equals(pngImageData(native))).toBe(true);
  });

  it("gives A1111's control_mode, resize_mode and processor_res the native fields' image", async () => {
    const image = await disc();
    const native = { control_mode: 'prompt', resize_mode: 'resize_and_fill', processor_res: 64 };
    const fromNative = await png(`${guided.url}/text2img`, {
      ...generation,
      width: 48,
      controlnet: [{ model: 'edges', image, module: 'canny', ...native }],
    });
    const balanced = await png(`${guided.url}/text2img`, {
      ...generation,
      width: 48,
      controlnet: [{ model: 'edges', image, module: 'canny', ...native, control_mode: 'balanced' }],
    });
    expect(pngImageData(balanced).equals(pngImageData(fromNative))).toBe(false);
    const res = await post(`${guided.url}/sdapi/v1/txt2img`, {
      prompt: generation.prompt,
      steps: 2,
      cfg_scale: 2,
      seed: 7,
      width: 48,
      height: 32,
      alwayson_scripts: {
        controlnet: {
          args: [
            {
              module: 'canny',
              model: 'edges',
              image,
              control_mode: 1,
              resize_mode: 'Resize and Fill',
              processor_res: 64,
            },
          ],
        },
      },
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { images: string[] };
    expect(pngImageData(Buffer.from(answer.images[0], 'base64')).equals(pngImageData(fromNative))).toBe(true);
  });
});
