import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import { binaryMask } from '../src/pipeline/stable-diffusion/inpaint.js';
import type { MaskImage, RgbImage } from '../src/pipeline/types.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { openTinyPipeline, type TinyEngine } from './helpers/tiny.js';

const SIZE = 32;

/** A picture with structure (a gradient and a square), so that encoding it is not trivial. */
function picture(): RgbImage {
  const data = new Uint8Array(SIZE * SIZE * 3);
  for (let y = 0; y < SIZE; y++)
    for (let x = 0; x < SIZE; x++) {
      const k = (y * SIZE + x) * 3;
      const inSquare = x >= 8 && x < 20 && y >= 10 && y < 22;
      data[k] = inSquare ? 230 : x * 7;
      data[k + 1] = y * 7;
      data[k + 2] = inSquare ? 20 : 128;
    }
  return { width: SIZE, height: SIZE, data };
}

/** White (repaint) right of `fromX`, black (keep) left of it; grey levels. */
function rightMask(fromX: number): MaskImage {
  const data = new Uint8Array(SIZE * SIZE);
  for (let y = 0; y < SIZE; y++) for (let x = fromX; x < SIZE; x++) data[y * SIZE + x] = 255;
  return { width: SIZE, height: SIZE, data };
}

const request = { num_inference_steps: 4, guidance_scale: 3, seed: 11, return_latents: true };

describe('inpainting (tiny sd1)', () => {
  const dirs: string[] = [];
  const pipes: Partial<Record<string, StableDiffusionPipeline>> = {};
  beforeAll(async () => {
    for (const channels of [4, 9]) {
      const dir = writeTinyPipeline(mkdtempSync(join(tmpdir(), `tiffin-inpaint-${channels}-`)), {
        unetInChannels: channels === 9 ? 9 : undefined,
      });
      dirs.push(dir);
      for (const engine of ['onnxruntime', 'wasm'] as TinyEngine[])
        pipes[`${channels}/${engine}`] = await openTinyPipeline(dir, engine);
    }
  }, 120_000);
  afterAll(() => {
    for (const p of Object.values(pipes)) p?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('binarises a mask as diffusers does: grey ≥ 50 % repaints, RGB by PIL luma', () => {
    const grey = binaryMask({ width: 3, height: 1, data: new Uint8Array([127, 128, 255]) });
    expect([...grey.data]).toEqual([0, 1, 1]);
    // Pure green is 150/255 luma (repaint), pure blue 29/255 (keep).
    const rgb = binaryMask({ width: 2, height: 1, data: new Uint8Array([0, 255, 0, 0, 0, 255]) });
    expect([...rgb.data]).toEqual([1, 0]);
  });

  for (const engine of ['onnxruntime', 'wasm'] as TinyEngine[]) {
    it(`blends on an ordinary UNet (${engine}): kept latents are the image's, whatever the prompt`, async () => {
      const pipe = pipes[`4/${engine}`] as StableDiffusionPipeline;
      const run = (prompt: string) =>
        pipe.inpaint({ ...request, prompt, image: picture(), mask_image: rightMask(16) });
      const [a, b] = [await run('a red cat'), await run('a blue dog')];
      expect(a.images[0]).toMatchObject({ width: SIZE, height: SIZE });
      const lat = (r: typeof a) => r.latents as { shape: number[]; data: Float32Array };
      // NCHW latents: the columns left of 16 px on the latent grid are kept (the mask is black there).
      const [, channels, rows, cols] = lat(a).shape;
      const keptCols = 16 / pipe.vae.scaleFactor;
      let keptSame = true;
      let repaintedDiffers = false;
      for (let c = 0; c < channels; c++)
        for (let y = 0; y < rows; y++)
          for (let x = 0; x < cols; x++) {
            const k = (c * rows + y) * cols + x;
            const same = lat(a).data[k] === lat(b).data[k];
            if (x < keptCols && !same) keptSame = false;
            if (x >= keptCols && !same) repaintedDiffers = true;
          }
      expect(keptSame).toBe(true);
      expect(repaintedDiffers).toBe(true);
    });

    it(`feeds an inpainting UNet (9 channels) the mask and masked image (${engine})`, async () => {
      const pipe = pipes[`9/${engine}`] as StableDiffusionPipeline;
      expect(pipe.unet.config.in_channels).toBe(9);
      const run = (mask: MaskImage) =>
        pipe.inpaint({ ...request, prompt: 'a red cat', image: picture(), mask_image: mask });
      const left = await run(rightMask(16));
      const right = await run(rightMask(8));
      expect(left.images[0]).toMatchObject({ width: SIZE, height: SIZE });
      // Same seed and prompt: only the mask differs, and the UNet sees it.
      expect(Buffer.from(left.images[0].data).equals(Buffer.from(right.images[0].data))).toBe(false);
    });
  }

  it('gives the same image on both engines (within one 8-bit level, 9 channels)', async () => {
    const run = (engine: TinyEngine) =>
      (pipes[`9/${engine}`] as StableDiffusionPipeline).inpaint({
        ...request,
        prompt: 'a red cat',
        image: picture(),
        mask_image: rightMask(16),
      });
    const [onnx, tfjs] = [await run('onnxruntime'), await run('wasm')];
    let worst = 0;
    for (let i = 0; i < onnx.images[0].data.length; i++)
      worst = Math.max(worst, Math.abs(onnx.images[0].data[i] - tfjs.images[0].data[i]));
    expect(worst).toBeLessThanOrEqual(1);
  });

  it('refuses a mask of another size and a 9-channel request on SDXL-only fields with 400-class errors', async () => {
    const pipe = pipes['4/onnxruntime'] as StableDiffusionPipeline;
    await expect(
      pipe.inpaint({
        ...request,
        prompt: 'x',
        image: picture(),
        mask_image: { width: 16, height: 16, data: new Uint8Array(256) },
      }),
    ).rejects.toThrow(/mask_image is 16×16, the image 32×32/);
    await expect(
      pipe.inpaint({
        ...request,
        prompt: 'x',
        image: picture(),
        mask_image: rightMask(4),
        prompt_2: 'sdxl only',
      }),
    ).rejects.toThrow(/SDXL parameter/);
  });
});
