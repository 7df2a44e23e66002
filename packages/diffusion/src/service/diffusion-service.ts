import { dirname, resolve } from 'node:path';
import {
  BadInput,
  type IODescriptor,
  isTiffinError,
  JSONDescriptor,
  JsonLineLogger,
  type Logger,
  Multipart,
  NDArray,
  Service,
  ServiceUnavailable,
  sseEvent,
  type TaskStore,
  Text,
} from '@tiffin/core';
import type { InputOf } from '@tiffin/core/internal';
import { encodeBmp, Image, type TiffinImage } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { z } from 'zod';
import type { BackendName } from '../backend.js';
import { assertBackendPackages } from '../backend-packages.js';
import type { DiffusionOnnxOptions } from '../engines/onnx/weight-format.js';
import { GenerationCancelled } from '../pipeline/cancel.js';
import { GenerationQueue } from './generation-queue.js';
import { type GeneratedImages, GeneratedImagesOutput } from './images-output.js';
import { resizeLanczos } from './lanczos-resize.js';
import { LoraRoots } from './lora-roots.js';
import { defaultImageSize, pipelineFamily } from './model-config.js';
import { ProgressHub, type ProgressKey } from './progress.js';
import { QueryInput } from './query-input.js';
import {
  DEFAULT_LIMITS,
  type GenerationLimits,
  generationParameters,
  type Img2ImgBody,
  img2imgSchema,
  progressSchema,
  requestLoras,
  type Text2ImgBody,
  text2imgSchema,
} from './request-schemas.js';
import type { JobCost } from './step-clock.js';
import { type JobOutcome, ModelWorkerHost } from './worker-host.js';
import type { JobImage, JobInput, JobLora } from './worker-protocol.js';

export type DiffusionPipelineKind = 'text2image' | 'img2img';

/** img2img uploads are resized to multiples of this (the SD VAE's scale factor). */
const VAE_GRID = 8;

export interface DiffusionServiceOptions {
  /** Diffusers folder of the Stable Diffusion 1.x / 2.x pipeline. */
  modelDir: string;
  /** Which API to serve: `POST /text2img` (default) or `POST /img2img`. */
  pipeline?: DiffusionPipelineKind;
  /** LoRA merged into the model at start, for every request. Its folder becomes a LoRA root. */
  loraWeights?: string;
  /** Folder of LoRA files requests may name (`lora_weights`); `$TIFFIN_LORA_DIR` is one too. */
  loraDir?: string;
  /** Service name (default `stable-diffusion`). */
  name?: string;
  /** Size, step, image and LoRA-count bounds (default 1024 px, 150 steps, 4 images, 4 LoRAs). */
  limits?: Partial<typeof DEFAULT_LIMITS>;
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
  /** Per-request timeout in seconds (default 600: a full-size generation on CPU is slow). */
  timeout?: number;
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
}

/** One generation as a request gives it: its input and the LoRA names it asks for. */
interface GenerationRequest {
  input: JobInput;
  loras: Array<{ path: string; weight: number }>;
}

/** The same with its LoRAs resolved inside the allowed folders, ready for the worker. */
interface PreparedGeneration {
  input: JobInput;
  loras: JobLora[];
}

/** What the factory returns: the Service plus handles tests and embedders use. */
export interface DiffusionService {
  service: Service;
  progress: ProgressHub;
  queue: GenerationQueue;
  /** The service's task store (`/<api>/submit` and friends, served by core). */
  jobs: TaskStore;
}

/**
 * A Stable Diffusion service: one model worker thread owns the pipeline (so health checks and metrics
 * answer while an image is generated), a bounded FIFO queue in front of it, per-request LoRA files from
 * allowed folders only, per-step progress in the log and on `POST /progress` (server-sent events).
 */
export function createDiffusionService(options: DiffusionServiceOptions): DiffusionService {
  const modelDir = resolve(options.modelDir);
  const kind = options.pipeline ?? 'text2image';
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const logger = options.logger ?? new JsonLineLogger((line) => process.stderr.write(line));
  const progress = new ProgressHub();
  const queue = new GenerationQueue(options.maxQueue ?? 4, 1);
  const service = new Service(options.name ?? 'stable-diffusion', {
    doc: `Stable Diffusion (${kind === 'img2img' ? 'image to image' : 'text to image'}) from ${modelDir}.`,
    models: options.models,
    // One task at a time: the model worker runs one generation at a time anyway.
    tasks: { maxTasks: options.maxJobs ?? 64, resultTtl: options.jobResultTtl ?? 600 },
  });

  let host: ModelWorkerHost | undefined;
  let roots: LoraRoots | undefined;
  const baseLora = options.loraWeights ? resolve(options.loraWeights) : undefined;

  service.onStartup(async () => {
    // Same default as the worker's backend selection: the option, else $TIFFIN_TF_BACKEND.
    assertBackendPackages(options.backend ?? (process.env.TIFFIN_TF_BACKEND as BackendName | undefined));
    roots = await LoraRoots.create([
      options.loraDir,
      baseLora && dirname(baseLora),
      process.env.TIFFIN_LORA_DIR,
    ]);
    host = await ModelWorkerHost.start({
      modelDir,
      backend: options.backend,
      onnx: options.onnx,
      baseLoraPath: baseLora,
      loraCacheSize: options.loraCacheSize ?? 4,
      loraCacheBytes: options.loraCacheBytes ?? 512 * 1024 ** 2,
    });
    const { warmUp } = host;
    for (const line of host.startLog) logger.log('info', line);
    queue.clock.recordStep(warmUp.unitsPerStep, warmUp.stepSeconds);
    logger.log('info', 'diffusion model ready', {
      modelDir,
      backend: host.backend,
      defaultSize: host.defaultSize,
      loraRoots: roots.directories,
      warmUp: `${warmUp.steps} steps at ${warmUp.size}×${warmUp.size} in ${warmUp.seconds.toFixed(2)} s`,
    });
  });
  service.onShutdown(async () => {
    await host?.close();
  });
  // A worker that died takes the model with it: /readyz says so, so an orchestrator stops routing here.
  service.addReadinessCheck(() => host?.failureReason ?? true);

  /** A request's generation with its LoRA names resolved inside the allowed folders (400 otherwise). */
  async function prepare(request: GenerationRequest): Promise<PreparedGeneration> {
    if (!host || !roots) throw new ServiceUnavailable('The model is still loading; try again shortly');
    const allowed = roots;
    const loras = await Promise.all(
      request.loras.map(async (l) => ({
        path: await allowed.resolve(l.path),
        name: l.path,
        weight: l.weight,
      })),
    );
    return { input: request.input, loras };
  }

  /**
   * Queue a prepared generation (synchronously: a full queue rejects at once) and run it on the worker,
   * reporting progress as `id`, filed under `key` (a job's or a request's namespace). Aborting `signal` (client gone, its 504 deadline passed, a job
   * cancelled) drops it from the queue or cancels it at the next step, freeing the worker.
   */
  async function start(
    prepared: PreparedGeneration,
    id: string,
    key: ProgressKey,
    signal: AbortSignal,
    onStep: (step: number, totalSteps: number, detail: { timestep: number; preview?: string }) => void,
    preview = false,
  ): Promise<GeneratedImages> {
    const worker = host as ModelWorkerHost;
    const { input, loras } = prepared;
    progress.publish(key, { request_id: id, status: 'queued' });
    let outcome: JobOutcome;
    try {
      outcome = await queue.submit(
        (job) => {
          progress.publish(key, { request_id: id, status: 'started' });
          return worker.run(id, input, {
            loras,
            signal,
            preview,
            onProgress: (p) => {
              job.stepDone(p.step);
              const detail = {
                timestep: p.timestep,
                ...(p.preview ? { preview: bmpDataUrl(p.preview) } : {}),
              };
              onStep(p.step, p.totalSteps, detail);
              logger.log('info', 'generation step', {
                requestId: id,
                step: p.step,
                totalSteps: p.totalSteps,
              });
              progress.publish(key, {
                request_id: id,
                status: 'step',
                step: p.step,
                total_steps: p.totalSteps,
                ...detail,
              });
            },
          });
        },
        // A job (filed under `job:`) waits however full the queue is: the job store bounds jobs.
        { signal, cost: jobCost(input), pastTheBound: key.startsWith('job:') },
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof GenerationCancelled) {
        logger.log('info', 'generation cancelled', {
          requestId: id,
          reason: String(signal.reason ?? message),
        });
        progress.publish(key, { request_id: id, status: 'cancelled', error: message });
      } else {
        if (!isTiffinError(err) || err.httpStatus >= 500)
          logger.log('error', 'generation failed', { requestId: id, error: message });
        progress.publish(key, { request_id: id, status: 'failed', error: message });
      }
      throw err;
    }
    logger.log('info', 'generation done', { requestId: id, seconds: outcome.seconds, seeds: outcome.seeds });
    progress.publish(key, { request_id: id, status: 'done', seconds: outcome.seconds });
    return {
      images: outcome.images.map((image) => new NDArray(image.data, [image.height, image.width, 3], 'uint8')),
      seeds: outcome.seeds,
    };
  }

  /**
   * The synchronous API (`/<name>`: the images in the response), also served as a task by core
   * (`task: true`): `/<name>/submit` → `{id}`, `/<name>/status?id=`, `/<name>/get?id=`, `/<name>/cancel?id=`
   * and `/<name>/events?id=` (server-sent progress, with previews when submitted with `?preview=true`).
   */
  function generationApis<I extends IODescriptor>(
    name: string,
    input: I,
    doc: string,
    toRequest: (value: InputOf<I>) => GenerationRequest,
  ): void {
    const output = new GeneratedImagesOutput();
    const timeout = options.timeout ?? 600;
    service.api({ name, input, output, timeout, doc, task: true }, async (value, ctx) => {
      // A task's progress is filed under its id (`job:`), a request's under its request id.
      const key: ProgressKey = ctx.taskId ? `job:${ctx.taskId}` : `request:${ctx.requestId}`;
      const preview =
        ctx.taskId !== undefined && ['1', 'true'].includes(ctx.request.query.get('preview') ?? '');
      return start(
        await prepare(toRequest(value as InputOf<I>)),
        ctx.requestId,
        key,
        ctx.request.signal,
        (step, total, detail) => ctx.progress(step, total, detail),
        preview,
      );
    });
  }

  if (kind === 'text2image') {
    generationApis(
      'text2img',
      jsonModel(text2imgSchema(limits, defaultImageSize(modelDir), pipelineFamily(modelDir))),
      'Generate an image from a prompt (JPEG; several images: multipart/mixed).',
      (body: Text2ImgBody) => ({
        input: {
          kind: 'text2img',
          params: generationParameters(body),
          height: body.height,
          width: body.width,
        },
        loras: requestLoras(body.lora_weights),
      }),
    );
  } else {
    generationApis(
      'img2img',
      new Multipart({ img: new Image(), data: jsonModel(img2imgSchema(limits, pipelineFamily(modelDir))) }),
      'Re-draw an image guided by a prompt (JPEG; several images: multipart/mixed).',
      (parts) => {
        const body = parts.data as Img2ImgBody;
        const image = rgbInput(parts.img as TiffinImage, limits);
        return {
          input: { kind: 'img2img', params: generationParameters(body), strength: body.strength, image },
          loras: requestLoras(body.lora_weights),
        };
      },
    );
  }

  service.api(
    {
      name: 'loras',
      input: new QueryInput(z.object({})),
      output: new JSONDescriptor(),
      doc: 'GET: the LoRA files requests may name in lora_weights, with their sizes.',
    },
    async () => {
      if (!roots) throw new ServiceUnavailable('The model is still loading; try again shortly');
      return { loras: await roots.list() };
    },
  );

  service.api(
    {
      name: 'progress',
      input: jsonModel(progressSchema),
      output: new Text({ content_type: 'text/event-stream' }),
      // The schema's own example (request_id null) asks for every generation, which is off by default.
      example: { request_id: '754995ad325f8bda' }, // the form of an x-request-id
      doc: "Server-sent events of one generation (request_id: a request's x-request-id or a job id) until it finishes; every generation only when the server allows it (--progress-all).",
    },
    (body, ctx) => {
      // Every generation's id and previews are other clients' business: that stream is opt-in.
      if (body.request_id === null && !options.progressAll) {
        throw new BadInput(
          'request_id is required: /progress follows one generation (streaming every generation is off; start the server with --progress-all to allow it)',
        );
      }
      return progressStream(progress, ctx.request.signal, body.request_id ?? undefined);
    },
  );

  return {
    service,
    progress,
    queue,
    // Read when asked: `tiffin serve` may give the service its --tasks store after it was made.
    get jobs(): TaskStore {
      return service.tasks;
    },
  };
}

/** A small RGB image as a data URL (BMP: encoded synchronously, between steps, with no extra work). */
function bmpDataUrl(image: JobImage): string {
  return `data:image/bmp;base64,${Buffer.from(encodeBmp(image.data, image.width, image.height)).toString('base64')}`;
}

async function* progressStream(
  hub: ProgressHub,
  signal: AbortSignal,
  requestId: string | undefined,
): AsyncGenerator<string> {
  // A comment line first, so clients see the stream open before the next event.
  yield ': progress\n\n';
  // One id: the synchronous request sent with that x-request-id, or the job of that id (whoever holds a job's
  // id may follow it, as /<api>/events does). No id: every generation (only with `progressAll`).
  const keys: ProgressKey[] | undefined =
    requestId === undefined ? undefined : [`request:${requestId}`, `job:${requestId}`];
  for await (const event of hub.events(signal, keys)) yield sseEvent({ event: event.status, data: event });
}

/** The job's UNet work for queue estimates: latent pixels × batch (×2 with guidance) per step. */
function jobCost(input: JobInput): JobCost {
  const { params } = input;
  const [height, width] =
    input.kind === 'text2img' ? [input.height, input.width] : [input.image.height, input.image.width];
  const latentPixels = (height / VAE_GRID) * (width / VAE_GRID);
  const steps =
    input.kind === 'text2img'
      ? params.num_inference_steps
      : Math.min(Math.floor(params.num_inference_steps * input.strength), params.num_inference_steps);
  const batch = params.num_images_per_prompt * (params.guidance_scale > 1 ? 2 : 1);
  return { steps, unitsPerStep: latentPixels * batch };
}

/**
 * The uploaded image as RGB uint8 within the size bound, with sides rounded down to multiples of 8
 * (SD's VAE scale factor) by a Lanczos resize of the whole picture, as diffusers' `VaeImageProcessor`
 * does (it resizes with PIL's LANCZOS; `resizeLanczos` matches it byte for byte), not by cropping.
 */
function rgbInput(
  img: TiffinImage,
  limits: GenerationLimits,
): { width: number; height: number; data: Uint8Array } {
  if (img.width > limits.maxSize || img.height > limits.maxSize) {
    throw new BadInput(
      `img is ${img.width}×${img.height}; the largest accepted side is ${limits.maxSize} pixels`,
    );
  }
  const width = img.width - (img.width % VAE_GRID);
  const height = img.height - (img.height % VAE_GRID);
  if (width === 0 || height === 0)
    throw new BadInput(`img is ${img.width}×${img.height}; both sides must be at least ${VAE_GRID} pixels`);
  if (!(img.data instanceof Uint8Array) || img.channels !== 3)
    throw new BadInput('img must decode to 8-bit RGB');
  return resizeLanczos({ width: img.width, height: img.height, data: img.data }, width, height);
}
