import type { BackendName } from '../backend.js';
import type { DiffusionOnnxOptions } from '../engines/onnx/weight-format.js';
import type { GenerationParameters } from '../pipeline/parameters.js';
import type { ControlMode } from '../pipeline/types.js';
import type { SchedulerName } from '../schedulers/registry.js';

/** What the host hands the model worker at start (structured-clone safe). */
export interface WorkerInit {
  /** Diffusers folder of the pipeline. */
  modelDir: string;
  backend?: BackendName;
  /** onnxruntime threads, providers and weight storage (`--ort-threads`, `--ort-providers`, `--weights`). */
  onnx?: DiffusionOnnxOptions;
  /** Tiny autoencoder folder (`--vae-tiny`): the default decoder and the previews' decoder. */
  vaeTiny?: string;
  /** LoRA merged once at start and kept for every request (`--lora-weights`). */
  baseLoraPath?: string;
  /** How many parsed per-request LoRA files the worker keeps, and how many bytes of them at most. */
  loraCacheSize: number;
  loraCacheBytes?: number;
  /** ControlNets loaded beside the model, by the name requests use (`--controlnet name=folder`). */
  controlnets?: Readonly<Record<string, string>>;
  /** A `--models-dir` checkpoint's worker: it loads the `controlnets` that fit it and leaves out the others. */
  skipUnfitControlNets?: boolean;
}

/** Generation parameters shared by both pipelines, already validated by the request schema. */
export type JobParameters = GenerationParameters;

/** The generation kinds a diffusion service can serve, by API name (`service/kinds/`). */
export type GenerationKindName = 'text2img' | 'img2img' | 'inpaint';

/** One generation for the worker: its kind's parameters and, for the image kinds, the images (RGB uint8). */
export interface JobInput {
  kind: GenerationKindName;
  params: JobParameters;
  /** The output size (the uploaded image's, resized to multiples of 8, for the image kinds). */
  height: number;
  width: number;
  /** img2img and inpaint: how much is re-drawn. */
  strength?: number;
  /** img2img and inpaint: the picture to start from. */
  image?: JobImage;
  /** inpaint: white repaints, black keeps (RGB grey levels, same size as `image`). */
  mask?: JobImage;
  /** text2img: a hires fix's second pass (docs/diffusion-service.md, "Hires fix"). */
  hires?: JobHires;
  /** ControlNet units, their maps already at the output size (docs/diffusion-service.md, "ControlNet"). */
  controlnet?: JobControlNet[];
}

/** One ControlNet unit of a job: a loaded ControlNet's name, its conditioning map and its weights. */
export interface JobControlNet {
  model: string;
  image: JobImage;
  conditioning_scale: number;
  guidance_start: number;
  guidance_end: number;
  guess_mode: boolean;
  control_mode: ControlMode;
}

/** How a hires fix upscales the first pass: its latents (bilinear or nearest) or its decoded image (Lanczos). */
export type HiresUpscaler = 'latent' | 'latent-nearest' | 'lanczos';

/** A hires fix: the first pass upscaled to `width` × `height`, then re-drawn as img2img with `strength`. */
export interface JobHires {
  width: number;
  height: number;
  upscaler: HiresUpscaler;
  strength: number;
  /** The second pass's steps (before the strength's share). */
  steps: number;
  /** The second pass's prompts (null: the first pass's). */
  prompt: string | null;
  negative_prompt: string | null;
}

/** One LoRA of a job. */
export interface JobLora {
  path: string;
  name: string;
  weight: number;
}

export interface JobMessage {
  type: 'job';
  id: number;
  requestId: string;
  input: JobInput;
  /**
   * This request's LoRAs, applied unfused to this job only: resolved, allowed paths, the names the request
   * gave (for messages) and weights.
   */
  loras: JobLora[];
  /**
   * Send previews: with a tiny autoencoder, decoded images (≤ 256 px a side) on some steps and the last; else a
   * latent-size approximation with each step.
   */
  preview: boolean;
}

/** Host → worker. `cancel` stops the job at its next step (it then answers `failed` with `cancelled`). */
export type HostMessage = JobMessage | { type: 'cancel'; id: number } | { type: 'shutdown' };

export interface JobImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/** The start-up proof that the model runs: one small generation, timed. */
export interface WarmUp {
  /** Side in pixels of the square image generated. */
  size: number;
  steps: number;
  /** UNet work of one step (latent pixels × batch), as the queue's cost counts it. */
  unitsPerStep: number;
  /** Seconds of one denoising step (the last one, after the first call's set-up). */
  stepSeconds: number;
  /** Seconds of the whole warm-up generation. */
  seconds: number;
}

/** A failure as it crosses the thread boundary: a TiffinError keeps its class name and status. */
export interface WorkerError {
  message: string;
  /** The error class's name (`BadInput`, `GenerationCancelled`, ...). */
  type: string;
  /** A TiffinError's HTTP status and stable code; absent for anything else (an internal error). */
  status?: number;
  code?: string;
}

/** Worker → host. */
export type WorkerMessage =
  | {
      type: 'ready';
      defaultSize: number;
      backend: string;
      defaultScheduler: SchedulerName;
      warmUp: WarmUp;
      /** The engine's start-up lines (providers skipped and why, graphs built or taken from the cache). */
      startLog: string[];
    }
  | { type: 'init-failed'; error: WorkerError }
  | {
      type: 'progress';
      id: number;
      step: number;
      totalSteps: number;
      timestep: number;
      preview?: JobImage;
    }
  | { type: 'done'; id: number; images: JobImage[]; seeds: number[]; seconds: number }
  | { type: 'failed'; id: number; error: WorkerError };
