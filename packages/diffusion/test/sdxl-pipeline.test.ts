import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { latentPreview } from '../src/pipeline/latent-preview.js';
import type { GenerationResult, RgbImage } from '../src/pipeline/types.js';
import { detInput } from '../src/weights/deterministic.js';
import { type Full, fixture, maxAbsDiff } from './helpers/fixtures.js';
import { fixtureNoise, type TinyEngine, tinyOnBothEngines } from './helpers/tiny.js';

/** The tiny SDXL folder (docs/spec/diffusion.md §11.1, flavour "sdxl") run end to end on both engines. */
describe('tiny SDXL pipeline on onnxruntime and TF.js', () => {
  const { pipes } = tinyOnBothEngines('sdxl');

  const text2img = (backend: TinyEngine, extra: Record<string, unknown> = {}) =>
    pipes[backend].text2img({
      prompt: 'a photo of an astronaut riding a horse on mars',
      negative_prompt: 'painting',
      num_inference_steps: 4,
      latents: detInput('pipe/latents', [1, 4, 16, 16]),
      noise: fixtureNoise(),
      return_float: true,
      ...extra,
    });
  const float = (r: GenerationResult) => r.images[0].float as Float32Array;

  it('loads as SDXL with its defaults: size from unet sample_size × VAE factor, guidance 5, Euler', async () => {
    const pipe = pipes.onnxruntime;
    expect(pipe.family).toBe('sdxl');
    expect(pipe.defaultSize).toBe(32);
    expect(pipe.defaultScheduler).toBe('euler');
    expect(pipe.vae.config.scaling_factor).toBe(0.13025);
    const out = await text2img('onnxruntime');
    expect(out.images[0].width).toBe(32);
    expect(out.timesteps).toEqual([751, 501, 251, 1]);
    // guidance 5 is the SDXL default: asking for it explicitly gives the same image.
    const explicit = await text2img('onnxruntime', { guidance_scale: 5 });
    expect(maxAbsDiff(float(out), float(explicit))).toBe(0);
  });

  it('text2img: the two engines agree (the SD1 fixtures tolerance, 1e-3)', async () => {
    const [a, b] = [await text2img('onnxruntime'), await text2img('wasm')];
    const err = maxAbsDiff(float(a), float(b));
    console.info(`tiny SDXL text2img onnxruntime vs TF.js max abs err ${err.toExponential(2)}`);
    expect(err).toBeLessThan(1e-3);
    const mean = float(a).reduce((x, y) => x + y, 0) / float(a).length;
    expect(mean).toBeGreaterThan(0.05);
    expect(mean).toBeLessThan(0.95);
  });

  it('every conditioning input matters: prompt, negative prompt (zeros when absent), time ids via size', async () => {
    const base = float(await text2img('onnxruntime'));
    const other = float(await text2img('onnxruntime', { prompt: 'a cat' }));
    expect(maxAbsDiff(base, other)).toBeGreaterThan(1e-3);
    // No negative prompt: zero negative embeddings (force_zeros_for_empty_prompt), unlike an explicit "".
    const none = float(await text2img('onnxruntime', { negative_prompt: null }));
    const empty = float(await text2img('onnxruntime', { negative_prompt: '' }));
    expect(maxAbsDiff(none, empty)).toBeGreaterThan(1e-3);
    const noneTf = float(await text2img('wasm', { negative_prompt: null }));
    expect(maxAbsDiff(none, noneTf)).toBeLessThan(1e-3);
    // 48×32 latents under other time ids than 32×32 ones: a different image, and the engines still agree.
    const wide = { width: 48, latents: detInput('pipe/latents-wide', [1, 4, 16, 24]) };
    const [w1, w2] = [await text2img('onnxruntime', wide), await text2img('wasm', wide)];
    expect(w1.images[0].width).toBe(48);
    expect(maxAbsDiff(float(w1), float(w2))).toBeLessThan(1e-3);
  });

  it('img2img with the SDXL defaults (strength 0.3, guidance 5, no negative prompt) matches diffusers within 1 level on both engines', async () => {
    // pipeline_sdxl_img2img.json: reference/sdxl_img2img_reference.py, StableDiffusionXLImg2ImgPipeline, same inputs.
    const ref = fixture('pipeline_sdxl_img2img.json');
    const data = Float32Array.from(detInput('pipe/init_image', [32 * 32 * 3], 0.25), (v) => v + 0.5);
    const image: RgbImage = { width: 32, height: 32, data };
    const run = (backend: TinyEngine) =>
      pipes[backend].img2img({
        prompt: ref.prompt,
        image,
        num_inference_steps: ref.settings.num_inference_steps,
        noise: fixtureNoise(),
        return_float: true,
      });
    const [a, b] = [await run('onnxruntime'), await run('wasm')];
    for (const [engine, out] of [
      ['onnxruntime', a],
      ['wasm', b],
    ] as const) {
      expect(out.timesteps).toEqual(ref.timesteps);
      const err = maxAbsDiff(float(out), (ref.image_full as Full).data);
      const levels = maxAbsDiff(out.images[0].data, ref.image_uint8 as number[]);
      console.info(
        `tiny SDXL img2img ${engine} vs diffusers: ${levels} level(s) max, float image max abs err ${err.toExponential(2)}`,
      );
      expect(levels).toBeLessThanOrEqual(1);
      expect(err).toBeLessThan(1e-4);
    }
    expect(maxAbsDiff(float(a), float(b))).toBeLessThan(1e-3);
  });

  it('num_images_per_prompt: each image of a batch is the one its seed gives alone (the pooled embeds and time ids batched alike)', async () => {
    const request = { prompt: 'a cat', num_inference_steps: 2, return_float: true };
    const batch = await pipes.onnxruntime.text2img({ ...request, num_images_per_prompt: 2, seed: 5 });
    expect(batch.seeds).toEqual([5, 6]);
    for (const k of [0, 1]) {
      const alone = await pipes.onnxruntime.text2img({ ...request, seed: batch.seeds[k] });
      expect(maxAbsDiff(batch.images[k].float as Float32Array, float(alone))).toBeLessThan(1e-4);
    }
  });

  it("previews SDXL latents with SDXL's own latent-to-RGB factors (its latent space is not SD's)", () => {
    // Pixel 0: zero latents; pixel 1: one unit on channel 0. SDXL's table has a bias, SD's has none.
    const latents = tf.tensor4d([0, 0, 0, 0, 1, 0, 0, 0], [1, 1, 2, 4]);
    const rgb = (v: number) => Math.round(Math.min(255, Math.max(0, (v + 1) * 127.5)));
    expect([...latentPreview(latents, 'sdxl').data]).toEqual(
      [0.1084, -0.0175, -0.0011, 0.3651 + 0.1084, 0.4232 - 0.0175, 0.4341 - 0.0011].map(rgb),
    );
    expect([...latentPreview(latents).data]).toEqual([0, 0, 0, 0.298, 0.207, 0.208].map(rgb));
    latents.dispose();
  });

  it('refuses what SDXL does not take with a clear error', async () => {
    await expect(text2img('onnxruntime', { clip_skip: 1 })).rejects.toThrow(
      /clip_skip is not supported for SDXL/,
    );
    await expect(
      pipes.wasm.text2img({ prompt_embeds: { shape: [1, 77, 80], data: new Float32Array(77 * 80) } }),
    ).rejects.toThrow(/prompt_embeds are not supported for SDXL/);
  });
});
