import type { HostTensor } from '../latents/host-tensor.js';
import type { LoraFile } from '../lora/types.js';
import type { SchedulerName } from '../schedulers/registry.js';
import type { SchedulerConfig, TimestepSpacing } from '../schedulers/types.js';
import type { ModelDefaults } from './model-defaults.js';

/** An RGB image, row-major HWC. Uint8 values 0–255, or floats in [0, 1]. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array | Float32Array;
}

/** What a noise draw is for; injected sources (tests, fixtures) may keep one counter per purpose. */
export type NoisePurpose = 'latents' | 'vae' | 'scheduler';

/**
 * Injected standard-normal draws, in diffusers' NCHW C order, for `shape` (NCHW). Replaces the
 * seeded source, e.g. to reproduce the reference fixtures.
 */
export type InjectedNoise = (purpose: NoisePurpose, shape: number[]) => Float32Array;

export interface GenerationProgress {
  /** 1-based step just finished, of `totalSteps` (= num_inference_steps, or its strength share in img2img). */
  step: number;
  totalSteps: number;
  timestep: number;
  /** The latents after this step (NHWC host array, e.g. for `latentPreview`); do not modify. */
  latents?: HostTensor;
}

/**
 * How a request's LoRA is applied (docs/spec/diffusion.md §9.3):
 * - `fused`: merged into the weights for the request and restored bit-exactly afterwards; no cost per
 *   step, but the pipeline's weights are shared state, so no other generation may run meanwhile.
 * - `unfused`: `W x + s · (alpha/r) · up(down(x))` during the forward pass; base weights untouched,
 *   so requests may run concurrently; a little extra work per LoRA layer and step.
 */
export type LoraMode = 'fused' | 'unfused';

/** A LoRA applied to one request only. */
export interface RequestLora {
  /** A parsed file (`readLoraFile`, `LoraCache`). */
  file: LoraFile;
  /** Request scale (multiplier), default 1. */
  scale?: number;
  /** Default `fused`. */
  mode?: LoraMode;
  /** Modules matching no base weight: an error (default) or skipped. */
  onUnmatched?: 'error' | 'skip';
  /**
   * The LoRA's own generation defaults (e.g. `LCM_LORA_DEFAULTS`, `readLoraDefaults(path)`), laid over the model's
   * for the fields the request leaves out.
   */
  defaults?: ModelDefaults;
}

/** One ControlNet applied to a request (diffusers' `StableDiffusionControlNetPipeline` arguments, per net). */
export interface ControlNetUnit {
  /** A name given at load (`controlnets`). */
  model: string;
  /** Encoded PNG/JPEG/WebP bytes, or decoded 8-bit RGB (HWC, `data` a Uint8Array of 3 values a pixel). */
  image: Uint8Array | RgbImage;
  /** Multiplies the residuals (default 1; 0 to 10). */
  conditioning_scale?: number;
  /** The share of the steps before which the net is off (default 0). */
  guidance_start?: number;
  /** The share of the steps after which the net is off (default 1; above `guidance_start`). */
  guidance_end?: number;
  /**
   * diffusers' guess mode: the net sees the positive prompt only, its residuals go to the conditional half of the
   * guidance batch, scaled from 0.1 (shallowest) to 1 (mid block) on a log scale. Forced by a net whose config has
   * `global_pool_conditions`.
   */
  guess_mode?: boolean;
  /**
   * A1111's control mode as its ControlNet extension implements it (docs/a1111-api.md, ControlNet): `balanced`
   * (default) scales every residual by `conditioning_scale`; `prompt` ("My prompt is more important") scales residual k
   * of n by 0.825^(12 − k) more, on both halves of the guidance batch; `controlnet` ("ControlNet is more important")
   * scales them so too and gives the unconditional half none.
   */
  control_mode?: ControlMode;
}

/** How a ControlNet's residuals weigh against the prompt (A1111's control modes). */
export type ControlMode = 'balanced' | 'prompt' | 'controlnet';

/**
 * A library request. Scalar parameters are validated by `parameters.ts` (the same rules as the HTTP API);
 * the rest are the library's own inputs and outputs.
 */
export interface CommonRequest {
  /** Required unless `prompt_embeds` is given. */
  prompt?: string;
  /** null/undefined → "" (docs/spec/diffusion.md §8.1). */
  negative_prompt?: string | null;
  num_inference_steps?: number;
  guidance_scale?: number;
  /** DDIM only; other schedulers ignore it (as diffusers does). */
  eta?: number;
  /** Seed of the engine's Gaussian source; random when absent (the result reports it). */
  seed?: number | null;
  /** Scheduler to use instead of the folder's (`from_config` semantics). */
  scheduler?: SchedulerName | null;
  /** The scheduler's `timestep_spacing` (null: the model's); a 400 for `lcm`, which does not use it. */
  timestep_spacing?: TimestepSpacing | null;
  /** Karras noise levels for `euler` / `dpmpp_2m` (null: the model's); a 400 for the other schedulers. */
  use_karras_sigmas?: boolean | null;
  num_images_per_prompt?: number;
  /** Optional guidance rescale φ (docs/spec/diffusion.md §8.1), default 0. */
  guidance_rescale?: number;
  /** clip_skip k ≥ 0: use the (k+1)-th last hidden state (final LayerNorm applied). */
  clip_skip?: number;
  /**
   * AUTOMATIC1111's prompt reading (default true, docs/spec/diffusion.md §3.1): `(word:1.3)`, `(word)`, `[word]`,
   * `\(` escapes and `BREAK` weight the tokens' embeddings, and a prompt past 75 tokens is read in chunks of 75
   * (at most 8). false: the prompt as literal text, cut after 75 tokens, as diffusers. Negative prompts alike.
   */
  prompt_weighting?: boolean;
  /** `tiny`: the tiny autoencoder loaded with `vaeTiny`; `full`: the model's VAE. Default: tiny when loaded. */
  decoder?: 'tiny' | 'full' | null;
  /**
   * SDXL only (an SD 1.x/2.x model refuses them): the prompts of the second text encoder (default: `prompt`,
   * `negative_prompt`; `""` counts as not given) and the micro-conditioning, `[height, width]` and `[top, left]` in
   * pixels (defaults: the output size, `[0, 0]`), with diffusers' `StableDiffusionXLPipeline` meaning.
   * `negative_*` sizes shape the negative (guidance) conditioning: in text2img only as a pair (`negative_original_size`
   * with `negative_target_size`, then with `negative_crops_coords_top_left`), in img2img each alone, with the
   * positive crop. Combinations diffusers would ignore are refused.
   */
  prompt_2?: string | null;
  negative_prompt_2?: string | null;
  original_size?: readonly [number, number] | null;
  crops_coords_top_left?: readonly [number, number] | null;
  target_size?: readonly [number, number] | null;
  negative_original_size?: readonly [number, number] | null;
  negative_crops_coords_top_left?: readonly [number, number] | null;
  negative_target_size?: readonly [number, number] | null;
  /** Precomputed prompt embeddings [B, 77, D] (C order); skips the text encoder for the prompt. */
  prompt_embeds?: { shape: [number, number, number]; data: Float32Array };
  negative_prompt_embeds?: { shape: [number, number, number]; data: Float32Array };
  noise?: InjectedNoise;
  /**
   * ControlNets guiding this request (names loaded with `controlnets`), summed as diffusers' MultiControlNet does;
   * each image is resized to the output size as diffusers' control image processor does.
   */
  controlnet?: readonly ControlNetUnit[];
  /** LoRA(s) for this request only, applied together; the pipeline's weights are as before once it ends. */
  lora?: RequestLora | readonly RequestLora[];
  /**
   * diffusers scheduler config keys for this request (e.g. `{ timestep_spacing: 'trailing' }`), laid over the
   * folder's `scheduler_config.json` and the model's default ones.
   */
  scheduler_config?: SchedulerConfig;
  /** Also return the float image(s) in [0, 1] (HWC). */
  return_float?: boolean;
  /** Also return the final latents (NCHW, before VAE scaling). */
  return_latents?: boolean;
  /** Called after each step; a returned promise is awaited before the next step (a preview decode). */
  onProgress?: (p: GenerationProgress) => unknown;
  /** Aborting it stops the generation at the next step with `GenerationCancelled`. */
  signal?: AbortSignal;
}

export interface Text2ImgRequest extends CommonRequest {
  height?: number;
  width?: number;
  /** Starting latents, NCHW C order [B, 4, H/8, W/8] (multiplied by init_noise_sigma). */
  latents?: Float32Array;
}

export interface Img2ImgRequest extends CommonRequest {
  /** The picture to start from; not needed with `init_latents`. */
  image?: RgbImage;
  /**
   * Latents to start from instead of an image's (NCHW C order [B or 1, 4, H/8, W/8], VAE-scaled as `return_latents`
   * gives them): a hires fix's upscaled first pass. The output size is theirs × the VAE factor.
   */
  init_latents?: { shape: readonly number[]; data: Float32Array };
  /** 0–1, default 0.8. */
  strength?: number;
  /** A hires fix's second pass: strength 0 then decodes the start unchanged instead of being refused. */
  second_pass?: boolean;
}

/** An inpainting mask: grey levels (1 value per pixel) or RGB (3), uint8 0–255; white is repainted. */
export interface MaskImage {
  width: number;
  height: number;
  data: Uint8Array;
}

export interface InpaintRequest extends CommonRequest {
  image: RgbImage;
  /** Same size as `image`; white (≥ 50 % grey) is repainted, black kept (diffusers' semantics). */
  mask_image: MaskImage;
  /** 0–1, default 1 (start from pure noise in the masked part, as diffusers' inpainting pipeline). */
  strength?: number;
}

export interface GeneratedImage {
  width: number;
  height: number;
  /** RGB uint8, HWC. */
  data: Uint8Array;
  /** Floats in [0, 1], HWC (when `return_float`). */
  float?: Float32Array;
}

export interface GenerationResult {
  images: GeneratedImage[];
  /** The request's seed (image k was drawn from seed + k, see `seeds`). */
  seed: number;
  /** Each image's own seed: a one-image request with it gives that image again. */
  seeds: number[];
  scheduler: SchedulerName;
  timesteps: number[];
  /** Final latents NCHW (when `return_latents`). */
  latents?: { shape: number[]; data: Float32Array };
  /** True when the prompt was longer than the tokenizer's limit and was cut. */
  promptTruncated: boolean;
}
