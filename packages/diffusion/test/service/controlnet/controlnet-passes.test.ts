import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { encodeBmp } from '@tiffin/io-image';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../../src/service/diffusion-service.js';
import { writeTinyControlNet } from '../../../src/tiny/write-tiny-controlnet.js';
import { writeTinyPipeline } from '../../../src/tiny/write-tiny-pipeline.js';
import { pngImageData } from '../service-helpers.js';

/**
 * A ControlNet unit through the passes a request can take beyond one text2img: the hires fix (native `hires` and
 * A1111's `enable_hr`, both passes guided) and `/inpaint`, on a real service with the tiny model and a tiny ControlNet
 * (deterministic weights). In each: scale 0 gives the unguided image bit for bit, scale 1 another, and the same request
 * twice the same bytes.
 */
const dirs: string[] = [];
let server: ServerHandle;

beforeAll(async () => {
  const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), 'tiffin-controlnet-passes-')));
  const edges = writeTinyControlNet(mkdtempSync(join(tmpdir(), 'tiffin-controlnet-passes-net-')), {
    seed: 'a',
  });
  dirs.push(dir, edges);
  const sd = createDiffusionService({ modelDir: dir, controlnets: { edges }, logger: new MemoryLogger() });
  server = await serve(sd.service, { port: 0, host: '127.0.0.1', logger: false, handleSignals: false });
}, 180_000);

afterAll(async () => {
  await server?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A 32×32 picture with a bright disc, as PNG base64: the Canny module finds its rim. */
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

async function ok(res: Response): Promise<Response> {
  expect(res.status, await res.clone().text()).toBe(200);
  return res;
}

const postJson = async (path: string, body: unknown) =>
  ok(
    await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

/** The PNG's pixel data (its IDAT), and its size. */
async function picture(png: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { width, height } = await sharp(png).metadata();
  return { data: pngImageData(png), width: width ?? 0, height: height ?? 0 };
}

/** Scale 0 is the unguided image, scale 1 another, the same guided request twice the same bytes. */
async function expectGuided(
  generate: (controlnet: unknown) => Promise<Buffer>,
  image: string,
): Promise<void> {
  const bare = await picture(await generate(null));
  const off = await picture(
    await generate([{ model: 'edges', image, module: 'canny', conditioning_scale: 0 }]),
  );
  const unit = [{ model: 'edges', image, module: 'canny', conditioning_scale: 1 }];
  const first = await generate(unit);
  const second = await generate(unit);
  expect(off.data.equals(bare.data)).toBe(true);
  expect((await picture(first)).data.equals(bare.data)).toBe(false);
  expect(second.equals(first)).toBe(true);
}

const generation = {
  prompt: 'a red cat',
  num_inference_steps: 2,
  guidance_scale: 2,
  seed: 7,
  width: 32,
  height: 32,
};

describe('a ControlNet unit with the hires fix', () => {
  it('guides both passes of /text2img with hires: the final size, scale 0 the plain image, scale 1 another', async () => {
    const image = await disc();
    const generate = async (controlnet: unknown) =>
      Buffer.from(
        await (
          await postJson('/text2img', {
            ...generation,
            output_format: 'png',
            hires: { scale: 2, steps: 2, strength: 0.6 },
            controlnet,
          })
        ).arrayBuffer(),
      );
    const sized = await picture(await generate([{ model: 'edges', image }]));
    expect([sized.width, sized.height]).toEqual([64, 64]);
    await expectGuided(generate, image);
  });

  it("guides A1111's txt2img with enable_hr and an alwayson_scripts unit the same way", async () => {
    const image = await disc();
    const generate = async (controlnet: unknown) => {
      const args = Array.isArray(controlnet)
        ? controlnet.map((u: { conditioning_scale: number }) => ({
            enabled: true,
            module: 'canny',
            model: 'edges',
            image,
            weight: u.conditioning_scale ?? 1,
          }))
        : [];
      const res = await postJson('/sdapi/v1/txt2img', {
        prompt: generation.prompt,
        steps: 2,
        cfg_scale: 2,
        seed: 7,
        width: 32,
        height: 32,
        enable_hr: true,
        hr_scale: 2,
        hr_second_pass_steps: 2,
        denoising_strength: 0.6,
        alwayson_scripts: { controlnet: { args } },
      });
      const answer = (await res.json()) as { images: string[] };
      return Buffer.from(answer.images[0] as string, 'base64');
    };
    const sized = await picture(await generate(null));
    expect([sized.width, sized.height]).toEqual([64, 64]);
    await expectGuided(generate, image);
  });
});

describe('a ControlNet unit on /inpaint', () => {
  it('guides the repaint through the data part: scale 0 the plain repaint, scale 1 another', async () => {
    const raw = new Uint8Array(32 * 32 * 3).map((_, i) => (i * 37) % 256);
    const maskRaw = new Uint8Array(32 * 32 * 3).map((_, i) => (Math.floor(i / 3) % 32 >= 16 ? 255 : 0));
    const parts = {
      image: Buffer.from(encodeBmp(raw, 32, 32)),
      mask_image: Buffer.from(encodeBmp(maskRaw, 32, 32)),
    };
    const image = await disc();
    const generate = async (controlnet: unknown) => {
      const form = new FormData();
      for (const [name, bytes] of Object.entries(parts))
        form.set(name, new Blob([new Uint8Array(bytes)], { type: 'image/bmp' }), `${name}.bmp`);
      const { width: _w, height: _h, ...rest } = generation;
      const data = { ...rest, strength: 0.8, output_format: 'png', controlnet };
      form.set('data', new Blob([JSON.stringify(data)], { type: 'application/json' }));
      const res = await ok(await fetch(`${server.url}/inpaint`, { method: 'POST', body: form }));
      return Buffer.from(await res.arrayBuffer());
    };
    await expectGuided(generate, image);
  });
});
