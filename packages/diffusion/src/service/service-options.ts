import type { Logger } from '@tiffin/core';
import type { BackendName } from '../backend.js';
import type { DiffusionOnnxOptions } from '../engines/onnx/weight-format.js';
import type { GenerationCacheOptions } from './generation-cache.js';
import type { GenerationKindName } from './kinds/index.js';
import type { DEFAULT_GENERATION_LIMITS } from './request-schemas.js';

/** A generation API a service may serve: `POST /text2img`, `/img2img`, `/inpaint`. */
export type DiffusionPipelineKind = GenerationKindName;

export interface DiffusionServiceOptions {
  /** Diffusers folder of the Stable Diffusion 1.x / 2.x pipeline. */
  modelDir: string;
  /**
   * Which generation APIs to serve (`POST /text2img`, `/img2img`, `/inpaint`). Default:
   * all three, or `inpaint` alone for an inpainting model (a UNet with 9 input channels).
   */
  pipeline?: DiffusionPipelineKind | readonly DiffusionPipelineKind[];
  /**
   * Folder of checkpoints requests may choose (A1111's `--ckpt-dir`): every diffusers folder and single-file
   * `.safetensors` checkpoint directly in it, by its name (`model`, `sd_model_checkpoint`); `modelDir` is the default.
   */
  modelsDir?: string;
  /** Pipelines kept loaded at once, least recently used evicted first (default 1). */
  maxLoadedModels?: number;
  /** LoRA merged into the model at start, for every request. Its folder becomes a LoRA root. */
  loraWeights?: string;
  /**
   * ControlNets loaded beside the model, by the name requests give in `controlnet[].model` (`--controlnet
   * name=folder`): diffusers `ControlNetModel` folders or single-file `.safetensors` (docs/diffusion-service.md,
   * "ControlNet").
   */
  controlnets?: Readonly<Record<string, string>>;
  /**
   * Tiny autoencoder folder (TAESD, diffusers `AutoencoderTiny` layout), loaded beside the model: requests decode
   * with it unless they ask for `decoder: "full"`, and previews are images it decodes.
   */
  vaeTiny?: string;
  /** Folder of LoRA files requests may name (`lora_weights`); `$TIFFIN_LORA_DIR` is one too. */
  loraDir?: string;
  /** Service name (default `stable-diffusion`). */
  name?: string;
  /** Size, step, image and LoRA-count bounds (default twice the model's size, 150 steps, 4 images, 4 LoRAs). */
  limits?: Partial<typeof DEFAULT_GENERATION_LIMITS>;
  /** Requests that may wait behind the running one before 503 + Retry-After (default 4). */
  maxQueue?: number;
  /** Parsed per-request LoRA files kept in memory (default 4). */
  loraCacheSize?: number;
  /** Most bytes of parsed LoRA files kept in memory (default 512 MiB). */
  loraCacheBytes?: number;
  /** Force a tfjs backend (default: `$TIFFIN_TF_BACKEND`, else the best that loads). */
  backend?: BackendName;
  /**
   * onnxruntime threads and execution providers (default: `$TIFFIN_ORT_THREADS`, `$TIFFIN_ORT_PROVIDERS`, else
   * every core on CPU) and weight storage (`weights`: f32, f16 or int8; default f32). Used when the backend is
   * onnxruntime.
   */
  onnx?: DiffusionOnnxOptions;
  /**
   * Per-request timeout in seconds of the generation APIs and their tasks (default 600: a full-size generation on
   * CPU is slow). When given, also the OpenAI and A1111 routes' deadline; left out, theirs is the server's `timeout`.
   */
  timeout?: number;
  /**
   * Generations of each kind's API that run at once, with a queue of the API's own (`ApiOptions.concurrency`;
   * docs/server.md, queues): waiting requests are ordered by their `Priority: u=` and then by arrival.
   */
  concurrency?: number;
  /** Requests of each kind's API that may wait for one of `concurrency` (`ApiOptions.queue`, default 0). */
  queue?: number;
  /**
   * Keep the answers of seeded requests of the generation APIs and send them again for the same request
   * (docs/diffusion-service.md, the response cache): the key is every parameter with the seed, `Accept` and the
   * model's files; an unseeded request is never kept. Where answers live is the server's `cache` store (memory,
   * or Redis with `--cache redis://…`). Default off.
   */
  cache?: boolean | GenerationCacheOptions;
  /** Model store tags the service uses (so `tiffin build` packages them). */
  models?: string[];
  /** Where per-step progress lines go (default JSON lines on stderr). */
  logger?: Logger;
  /** Tasks (`/<api>/submit`) held at once, finished ones included (default 64). */
  maxJobs?: number;
  /** Seconds a finished job's status and images are kept (default 600). */
  jobResultTtl?: number;
  /**
   * Let `POST /progress` with no `request_id` stream every generation (their ids and previews) to any client
   * (default false: a client follows only a generation whose id it knows).
   */
  progressAll?: boolean;
  /** Serve the generation page at `/ui` (default true). */
  page?: boolean;
  /** Serve the OpenAI Images API (`/v1/images/*`, `/v1/models`; default true). */
  openaiApi?: boolean;
  /** Serve AUTOMATIC1111's API (`/sdapi/v1/*`; default true). */
  a1111Api?: boolean;
  /**
   * AUTOMATIC1111's `--api-auth`: `user:pass` pairs whose HTTP Basic credentials open `/sdapi/v1/*` (the service's
   * API token still does too); a wrong or missing one is a 401 with `WWW-Authenticate: Basic`. Default: the token.
   */
  a1111ApiAuth?: readonly string[];
}
