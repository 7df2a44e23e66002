import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogger, type ServerHandle, serve } from '@tiffin/core';
import { encodeBmp } from '@tiffin/io-image';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { resizeLanczos } from '../../src/service/lanczos-resize.js';
import { writeTinyPipeline } from '../../src/tiny/write-tiny-pipeline.js';
import { jpegSize } from './service-helpers.js';

/**
 * `POST /inpaint` over HTTP, synchronously and as a task, on an ordinary tiny model (masked latent blending) and
 * on an inpainting one (9-channel UNet), and what a client gets wrong answered 400.
 */
const dirs: string[] = [];
const servers: Record<'blend' | 'unet9', ServerHandle> = {} as never;

/** An RGB BMP drawn by `fill`. */
async function bmp(width: number, height: number, fill: (x: number, y: number) => number[]) {
  const raw = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.set(fill(x, y), (y * width + x) * 3);
  return Buffer.from(encodeBmp(raw, width, height));
}

const picture = () => bmp(32, 24, (x, y) => [x * 8, y * 10, 128]);
/** White (repaint) on the right half. */
const mask = (width = 32, height = 24) =>
  bmp(width, height, (x) => (x >= width / 2 ? [255, 255, 255] : [0, 0, 0]));

function form(parts: Record<string, Buffer | string | undefined>): FormData {
  const f = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (value === undefined) continue;
    if (typeof value === 'string') f.set(name, new Blob([value], { type: 'application/json' }));
    else f.set(name, new Blob([new Uint8Array(value)], { type: 'image/bmp' }), `${name}.bmp`);
  }
  return f;
}

const body = JSON.stringify({ prompt: 'a red cat', num_inference_steps: 3, guidance_scale: 2, seed: 5 });

beforeAll(async () => {
  for (const [key, channels] of [
    ['blend', undefined],
    ['unet9', 9],
  ] as const) {
    const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), `tiffin-inpaint-api-${key}-`)), {
      unetInChannels: channels,
    });
    dirs.push(dir);
    const sd = createDiffusionService({ modelDir: dir, logger: new MemoryLogger() });
    servers[key] = await serve(sd.service, {
      port: 0,
      host: '127.0.0.1',
      logger: false,
      handleSignals: false,
    });
  }
}, 180_000);

afterAll(async () => {
  for (const s of Object.values(servers)) await s?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('POST /inpaint', () => {
  it('serves every kind on an ordinary model, inpainting alone on an inpainting model', async () => {
    const paths = async (s: ServerHandle) =>
      Object.keys(((await (await fetch(`${s.url}/docs.json`)).json()) as { paths: object }).paths);
    const ordinary = await paths(servers.blend);
    for (const p of ['/text2img', '/img2img', '/inpaint', '/inpaint/submit']) expect(ordinary).toContain(p);
    const inpainting = await paths(servers.unet9);
    expect(inpainting).toContain('/inpaint');
    expect(inpainting).not.toContain('/text2img');
  });

  for (const key of ['blend', 'unet9'] as const) {
    it(`repaints at the image's size (${key}), the same as a task`, async () => {
      const [image, m] = [await picture(), await mask()];
      const res = await fetch(`${servers[key].url}/inpaint`, {
        method: 'POST',
        body: form({ image, mask_image: m, data: body }),
      });
      expect(res.status).toBe(200);
      const sync = Buffer.from(await res.arrayBuffer());
      expect(jpegSize(sync)).toEqual({ width: 32, height: 24 });

      const submitted = await fetch(`${servers[key].url}/inpaint/submit`, {
        method: 'POST',
        body: form({ image, mask_image: m, data: body }),
      });
      expect(submitted.status).toBe(202);
      const { id } = (await submitted.json()) as { id: string };
      for (;;) {
        const status = (await (await fetch(`${servers[key].url}/inpaint/status?id=${id}`)).json()) as {
          status: string;
        };
        if (status.status === 'succeeded') break;
        expect(['queued', 'running']).toContain(status.status);
        await new Promise((r) => setTimeout(r, 50));
      }
      const got = Buffer.from(await (await fetch(`${servers[key].url}/inpaint/get?id=${id}`)).arrayBuffer());
      expect(got.equals(sync)).toBe(true);
    });
  }

  it('answers 400 with a code for a mask that does not match, a missing mask, and a mask that is not an image', async () => {
    const url = `${servers.blend.url}/inpaint`;
    const image = await picture();
    const cases: Array<[string, FormData, RegExp]> = [
      ['wrong size', form({ image, mask_image: await mask(16, 16), data: body }), /must be the same size/],
      ['no mask', form({ image, data: body }), /mask_image/],
      [
        'not an image',
        form({ image, mask_image: Buffer.from('not a picture'), data: body }),
        /mask_image|image/,
      ],
      [
        'SDXL field on SD',
        form({ image, mask_image: await mask(), data: JSON.stringify({ prompt: 'x', prompt_2: 'y' }) }),
        /SDXL parameter/,
      ],
      [
        'strength out of range',
        form({ image, mask_image: await mask(), data: JSON.stringify({ prompt: 'x', strength: 2 }) }),
        /strength/,
      ],
    ];
    for (const [what, data, message] of cases) {
      const res = await fetch(url, { method: 'POST', body: data });
      expect(res.status, what).toBe(400);
      const answer = (await res.json()) as { error: string; code: string };
      expect(answer.code, what).toMatch(/^[A-Z_]+$/);
      expect(answer.error, what).toMatch(message);
    }
  });
});

describe('an upload larger than the model serves', () => {
  it('is resized down to the served size (aspect kept, sides multiples of 8) on img2img and inpaint, as its Lanczos resize would be', async () => {
    const url = servers.blend.url;
    const { max_size: most } = (await (await fetch(`${url}/defaults`)).json()) as { max_size: number };
    // Four times the served side across, three times down: over the bound that once refused it.
    const [width, height] = [4 * most, 3 * most];
    const [fitW, fitH] = [most, Math.floor((most * 3) / 4 / 8) * 8];
    const rgb = new Uint8Array(width * height * 3).map((_, i) => (i * 7 + ((i / 3 / width) | 0) * 5) % 256);
    const big = Buffer.from(encodeBmp(rgb, width, height));
    const fitted = Buffer.from(
      encodeBmp(resizeLanczos({ width, height, data: rgb }, fitW, fitH).data, fitW, fitH),
    );
    const answer = async (path: string, parts: Record<string, Buffer | string>) => {
      const res = await fetch(`${url}${path}`, { method: 'POST', body: form(parts) });
      expect(res.status, path).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const data = JSON.stringify({ prompt: 'a red cat', num_inference_steps: 2, strength: 0.5, seed: 5 });
    const fromBig = await answer('/img2img', { img: big, data });
    expect(jpegSize(fromBig)).toEqual({ width: fitW, height: fitH });
    expect(fromBig.equals(await answer('/img2img', { img: fitted, data }))).toBe(true);
    const bigMask = await mask(width, height);
    const painted = await answer('/inpaint', { image: big, mask_image: bigMask, data: body });
    expect(jpegSize(painted)).toEqual({ width: fitW, height: fitH });
  });
});
