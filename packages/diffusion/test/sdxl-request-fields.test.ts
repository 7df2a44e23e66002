import { describe, expect, it } from 'vitest';
import type { HostTensor } from '../src/latents/host-tensor.js';
import { sdxlTimeIds } from '../src/pipeline/sdxl-time-ids.js';
import type { GenerationResult, RgbImage, Text2ImgRequest } from '../src/pipeline/types.js';
import { detInput } from '../src/weights/deterministic.js';
import { compareSummary, type Full, fixture, maxAbsDiff, maxRelativeDiff } from './helpers/fixtures.js';
import { fixtureNoise, type TinyEngine, tinyOnBothEngines } from './helpers/tiny.js';

/**
 * SDXL's request fields against diffusers 0.27.2 (pipeline_sdxl_conditioning.json, written by
 * reference/sdxl_conditioning_reference.py from the tiny SDXL folder): the second encoder's prompts (`prompt_2`,
 * `negative_prompt_2`) and the micro-conditioning (`original_size`, `crops_coords_top_left`, `target_size` and the
 * negative ones), as tokens, prompt encoding, the time ids diffusers handed its UNet, and images within 1 level of 255.
 */
const fx = fixture('pipeline_sdxl_conditioning.json');
const ENGINES: TinyEngine[] = ['onnxruntime', 'wasm'];

/** A fixture case's request as the library takes it (the JSON arrays are diffusers' tuples). */
type CaseRequest = Pick<
  Text2ImgRequest,
  | 'negative_prompt'
  | 'prompt_2'
  | 'negative_prompt_2'
  | 'original_size'
  | 'crops_coords_top_left'
  | 'target_size'
  | 'negative_original_size'
  | 'negative_crops_coords_top_left'
  | 'negative_target_size'
>;

describe('SDXL prompt_2 and micro-conditioning match diffusers (onnxruntime and TF.js)', () => {
  const { pipes } = tinyOnBothEngines('sdxl');
  const settings = fx.txt2img_settings;
  const float = (r: GenerationResult) => r.images[0].float as Float32Array;

  const reportLevels = (
    what: string,
    out: GenerationResult,
    ref: { image_uint8: number[]; image_full: Full },
  ) => {
    const levels = maxAbsDiff(out.images[0].data, ref.image_uint8);
    const err = maxAbsDiff(float(out), ref.image_full.data);
    console.info(
      `tiny SDXL ${what} vs diffusers: ${levels} level(s) max, float image max abs err ${err.toExponential(2)}`,
    );
    expect(levels).toBeLessThanOrEqual(1);
    expect(err).toBeLessThan(1e-3);
  };

  it('tokenizes the second prompts as both diffusers tokenizers do (non-ASCII included)', () => {
    const pipe = pipes.onnxruntime;
    const sdxl = pipe.sdxl as NonNullable<typeof pipe.sdxl>;
    for (const [field, text] of [
      ['prompt_2', fx.prompt_2],
      ['negative_prompt_2', fx.negative_prompt_2],
    ] as const) {
      const [ids1, ids2] = fx.token_ids[field];
      expect(pipe.tokenizer.encode(text)).toEqual(ids1);
      expect(sdxl.tokenizer2.encode(text)).toEqual(ids2);
    }
  });

  for (const engine of ENGINES)
    it(`${engine}: encoder 1 reads the prompt, encoder 2 prompt_2 (context side by side, pooled from encoder 2)`, async () => {
      const pipe = pipes[engine];
      const sdxl = pipe.sdxl as NonNullable<typeof pipe.sdxl>;
      const encode = async (text: string, text2: string) => {
        const one = await pipe.textEncoder.encodeForSdxlOnHost([pipe.tokenizer.encode(text)]);
        const two = await sdxl.textEncoder2.encodeForSdxlOnHost([sdxl.tokenizer2.encode(text2)]);
        return { one: one.penultimate, two: two.penultimate, pooled: two.textEmbeds as HostTensor };
      };
      const sideBySide = (a: HostTensor, b: HostTensor) => {
        const [da, db] = [a.shape[2], b.shape[2]];
        const out: number[] = [];
        for (let t = 0; t < 77; t++)
          out.push(...a.data.subarray(t * da, (t + 1) * da), ...b.data.subarray(t * db, (t + 1) * db));
        return out;
      };
      const ref = fx.encode_prompt;
      const positive = await encode(fx.prompt, fx.prompt_2);
      const negative = await encode(fx.negative_prompt, fx.negative_prompt_2);
      for (const [got, summary] of [
        [sideBySide(positive.one, positive.two), ref.prompt_embeds],
        [sideBySide(negative.one, negative.two), ref.negative_prompt_embeds],
      ] as const) {
        expect(got.length).toBe(77 * 80);
        const c = compareSummary(got, summary);
        expect(c.maxAbs).toBeLessThan(1e-4);
        expect(c.stdRel).toBeLessThan(1e-5);
      }
      expect(maxRelativeDiff(ref.pooled_prompt_embeds_full.data, positive.pooled.data)).toBeLessThan(1e-5);
      expect(maxRelativeDiff(ref.negative_pooled_prompt_embeds_full.data, negative.pooled.data)).toBeLessThan(
        1e-5,
      );
    });

  it('time ids: the rows diffusers handed its UNet, [negative, positive], for every case', () => {
    const size = { height: settings.height, width: settings.width };
    for (const c of Object.values(fx.txt2img) as Array<{ request: CaseRequest; time_ids: number[][] }>) {
      const ids = sdxlTimeIds({ ...size, ...c.request }, 'text2img');
      expect([ids.negative, ids.positive]).toEqual(c.time_ids);
    }
    const ids = sdxlTimeIds({ height: 32, width: 32, ...fx.img2img.request }, 'img2img');
    expect([ids.negative, ids.positive]).toEqual(fx.img2img.time_ids);
  });

  for (const engine of ENGINES)
    for (const [key, c] of Object.entries(fx.txt2img) as Array<[string, { request: CaseRequest }]>)
      it(`${engine}: text2img with ${Object.keys(c.request).join(', ')} within 1 level`, async () => {
        const out = await pipes[engine].text2img({
          prompt: fx.prompt,
          ...c.request,
          height: settings.height,
          width: settings.width,
          num_inference_steps: settings.num_inference_steps,
          guidance_scale: settings.guidance_scale,
          latents: detInput(settings.latents, [1, 4, settings.height / 2, settings.width / 2]),
          noise: fixtureNoise(),
          return_float: true,
        });
        reportLevels(`${engine} text2img ${key}`, out, fx.txt2img[key]);
      }, 60_000);

  for (const engine of ENGINES)
    it(`${engine}: img2img with prompt_2 and micro-conditioning (negative sizes alone, positive crop) within 1 level`, async () => {
      const data = Float32Array.from(detInput('pipe/init_image', [32 * 32 * 3], 0.25), (v) => v + 0.5);
      const image: RgbImage = { width: 32, height: 32, data };
      const out = await pipes[engine].img2img({
        prompt: fx.prompt,
        ...(fx.img2img.request as CaseRequest),
        image,
        num_inference_steps: fx.img2img.settings.num_inference_steps,
        noise: fixtureNoise(),
        return_float: true,
      });
      reportLevels(`${engine} img2img micro-conditioning`, out, fx.img2img);
    }, 60_000);

  it('two images per prompt: each is the image its seed gives alone, negative sizes included (diffusers pairs them crosswise)', async () => {
    // diffusers 0.27.2's text2img repeats the [negative, positive] pair of time ids, so with n > 1 its rows alternate
    // while the embeddings are [negative × n, positive × n]: image 1's negative row gets the positive time ids.
    const { request, time_ids: rows } = fx.txt2img_two_images_time_ids;
    const ids = sdxlTimeIds({ height: 32, width: 32, ...(request as CaseRequest) }, 'text2img');
    expect(rows).toEqual([ids.negative, ids.positive, ids.negative, ids.positive]);
    // Tiffin pairs every row with its own embedding, as diffusers' img2img and any one-image request do.
    const common = {
      prompt: fx.prompt,
      ...(request as CaseRequest),
      num_inference_steps: 2,
      return_float: true,
    };
    const batch = await pipes.onnxruntime.text2img({ ...common, num_images_per_prompt: 2, seed: 5 });
    for (const k of [0, 1]) {
      const alone = await pipes.onnxruntime.text2img({ ...common, seed: batch.seeds[k] });
      expect(maxAbsDiff(batch.images[k].float as Float32Array, float(alone))).toBeLessThan(1e-4);
    }
  }, 60_000);

  it('every field changes the image, and an empty prompt_2 is the prompt (diffusers: prompt_2 or prompt)', async () => {
    const run = (extra: Partial<Text2ImgRequest>) =>
      pipes.onnxruntime.text2img({
        prompt: fx.prompt,
        negative_prompt: fx.negative_prompt,
        num_inference_steps: 2,
        seed: 1,
        return_float: true,
        ...extra,
      });
    const plain = await run({});
    const base = float(plain);
    // A second prompt past 77 tokens is read in chunks like the first (A1111); without prompt weighting it is cut
    // (diffusers), and the result says so.
    expect(plain.promptTruncated).toBe(false);
    const long = 'a red fox '.repeat(30);
    expect((await run({ prompt_2: long })).promptTruncated).toBe(false);
    expect((await run({ prompt_2: long, prompt_weighting: false })).promptTruncated).toBe(true);
    expect(maxAbsDiff(base, float(await run({ prompt_2: '' })))).toBe(0);
    expect(maxAbsDiff(base, float(await run({ prompt_2: fx.prompt })))).toBe(0);
    expect(maxAbsDiff(base, float(await run({ original_size: [32, 32], target_size: [32, 32] })))).toBe(0);
    for (const extra of [
      { prompt_2: fx.prompt_2 },
      { negative_prompt_2: fx.negative_prompt_2 },
      { original_size: [64, 64] as const },
      { crops_coords_top_left: [0, 16] as const },
      { target_size: [16, 32] as const },
      { negative_original_size: [16, 16] as const, negative_target_size: [32, 32] as const },
    ])
      expect(maxAbsDiff(base, float(await run(extra))), JSON.stringify(extra)).toBeGreaterThan(1e-4);
  }, 60_000);
});
