import { randomUUID } from 'node:crypto';
import { basename, dirname, resolve } from 'node:path';
import {
  BadInput,
  isTiffinError,
  JSONDescriptor,
  JsonLineLogger,
  type Logger,
  NDArray,
  Service,
  ServiceUnavailable,
  type TaskStore,
  Text,
} from '@tiffin/core';
import { encodeBmp } from '@tiffin/io-image';
import { jsonModel } from '@tiffin/io-json';
import { z } from 'zod';
import type { BackendName } from '../backend.js';
import { assertBackendPackages } from '../backend-packages.js';
import type { DiffusionOnnxOptions } from '../engines/onnx/weight-format.js';
import { GenerationCancelled } from '../pipeline/cancel.js';
import {
  type ModelDefaults,
  mergeDefaults,
  readLoraDefaults,
  readModelDefaults,
} from '../pipeline/model-defaults.js';
import { a1111Routes } from './compat/a1111/a1111-routes.js';
import { openAIRoutes } from './compat/openai/openai-routes.js';
import { compatGenerator } from './compat/service-generator.js';
import { generationPage } from './generation-page.js';
import { GenerationQueue } from './generation-queue.js';
import { type GeneratedImages, GeneratedImagesOutput } from './images-output.js';
import {
  GENERATION_KINDS,
  type GenerationKindName,
  type GenerationRequest,
  type KindContext,
} from './kinds/index.js';
import { LoraRoots } from './lora-roots.js';
import { defaultImageSize, pipelineFamily } from './model-config.js';
import { negotiateOutputFormat } from './output-format.js';
import { ProgressHub, type ProgressKey, progressStream } from './progress.js';
import { QueryInput } from './query-input.js';
import { DEFAULT_GENERATION_LIMITS, defaultedValues, progressSchema } from './request-schemas.js';
import { servedKinds } from './served-kinds.js';
import { jobCost } from './step-clock.js';
import { type JobOutcome, ModelWorkerHost } from './worker-host.js';
import type { JobImage, JobInput, JobLora } from './worker-protocol.js';

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
  /** LoRA merged into the model at start, for every request. Its folder becomes a LoRA root. */
  loraWeights?: string;
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
}

/** The largest side a request may ask for unless configured: the model's own size times this. */
export const MODEL_SIZE_FACTOR = 2;

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
  const kinds = servedKinds(modelDir, options.pipeline);
  const baseLora = options.loraWeights ? resolve(options.loraWeights) : undefined;
  // The model's own defaults, then those of the LoRA merged at start (an LCM-LoRA: lcm, 4 steps, no guidance).
  const defaults: ModelDefaults = mergeDefaults(
    readModelDefaults(modelDir),
    baseLora ? readLoraDefaults(baseLora) : undefined,
  );
  const family = pipelineFamily(modelDir);
  const modelSize = Math.max(defaultImageSize(modelDir), defaults.height ?? 0, defaults.width ?? 0);
  const limits = {
    ...DEFAULT_GENERATION_LIMITS,
    // Sizes far beyond what the model was trained for cost quadratic time and memory for no picture.
    maxSize: modelSize * MODEL_SIZE_FACTOR,
    // A bound given as undefined (a CLI flag left out) keeps the default.
    ...Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, v]) => v !== undefined)),
  };
  const defaulted = defaultedValues(limits, family, defaults);
  const logger = options.logger ?? new JsonLineLogger((line) => process.stderr.write(line));
  const progress = new ProgressHub();
  const queue = new GenerationQueue(options.maxQueue ?? 4, 1);
  const service = new Service(options.name ?? 'stable-diffusion', {
    doc: `Stable Diffusion (${kinds.map((k) => GENERATION_KINDS[k].title).join(', ')}) from ${basename(modelDir)}.`,
    models: options.models,
    // One task at a time: the model worker runs one generation at a time anyway.
    tasks: { maxTasks: options.maxJobs ?? 64, resultTtl: options.jobResultTtl ?? 600 },
  });

  // Why generations stopped early: an operator tells a too-short `--timeout` from clients leaving.
  const cancelled = service.counter(
    'generations_cancelled_total',
    'Generations cancelled before they finished, by reason (timeout, client_gone, cancelled)',
    ['reason'],
  );

  // Public: the page itself holds nothing; the API calls it makes need the token like any other client's.
  if (options.page !== false) service.mount(generationPage(), { public: true });

  let host: ModelWorkerHost | undefined;
  let roots: LoraRoots | undefined;

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
      vaeTiny: options.vaeTiny ? resolve(options.vaeTiny) : undefined,
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
    return { input: withLoraDefaults(request, loras), loras };
  }

  /** The request's input with the fields it left out set by its LoRAs' own defaults, where they have some. */
  function withLoraDefaults(request: GenerationRequest, loras: JobLora[]): JobInput {
    if (loras.length === 0 || request.leftOut.length === 0) return request.input;
    let loraDefaults: ModelDefaults;
    try {
      loraDefaults = mergeDefaults(...loras.map((l) => readLoraDefaults(l.path)));
    } catch {
      throw new BadInput('a LoRA in lora_weights has an invalid defaults file beside it');
    }
    const params = { ...request.input.params };
    for (const field of request.leftOut) {
      const value = loraDefaults[field];
      if (value === undefined) continue;
      if (field === 'num_inference_steps')
        params.num_inference_steps = Math.min(value as number, limits.maxSteps);
      else if (field === 'guidance_scale') params.guidance_scale = value as number;
      else params.scheduler = value as ModelDefaults['scheduler'] & {};
    }
    return { ...request.input, params };
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
    onStep: (
      step: number,
      totalSteps: number,
      detail: { timestep: number; preview?: string },
      previewImage?: JobImage,
    ) => void,
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
              onStep(p.step, p.totalSteps, detail, p.preview);
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
        cancelled([cancelReason(signal.reason)]);
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
   * Each served kind's synchronous API (`/<name>`: the images in the response), also served as a task by core
   * (`task: true`): `/<name>/submit` → `{id}`, `/<name>/status?id=`, `/<name>/get?id=`, `/<name>/cancel?id=`
   * and `/<name>/events?id=` (server-sent progress, with previews when submitted with `?preview=true`).
   */
  const context: KindContext = {
    limits,
    defaultSize: defaultImageSize(modelDir),
    family,
    defaults,
    defaulted,
  };
  const output = new GeneratedImagesOutput();
  const timeout = options.timeout ?? 600;
  for (const name of kinds) {
    const kind = GENERATION_KINDS[name];
    service.api(
      { name, input: kind.input(context), output, timeout, doc: kind.doc, task: true },
      async (value, ctx) => {
        // A task's progress is filed under its id (`job:`), a request's under its request id.
        const key: ProgressKey = ctx.taskId ? `job:${ctx.taskId}` : `request:${ctx.requestId}`;
        const preview =
          ctx.taskId !== undefined && ['1', 'true'].includes(ctx.request.query.get('preview') ?? '');
        const request = kind.toRequest(value, context);
        const { format, quality } = request.output;
        if (quality !== null && format === 'png')
          throw new BadInput('output_quality applies to jpeg and webp, not png (lossless)');
        // A format the client cannot take is a 406 now, before the generation's minutes.
        if (ctx.taskId === undefined) negotiateOutputFormat(ctx.request.headers.get('accept'), format);
        const images = await start(
          await prepare(request),
          ctx.requestId,
          key,
          ctx.request.signal,
          (step, total, detail) => ctx.progress(step, total, detail),
          preview,
        );
        return { ...images, format, quality };
      },
    );
  }

  // The compatible APIs run on the kinds, through `start`. Their routes' deadline is the service's `timeout`
  // when one was given (`tiffin diffusion start --timeout`), else the server's (`tiffin serve --timeout`).
  const compat = compatGenerator({
    kinds,
    context,
    modelName: basename(modelDir),
    defaultScheduler: () => host?.defaultScheduler ?? null,
    listLoras: async () => (roots ? roots.list() : []),
    generate: async (request, signal, watch) => {
      const id = randomUUID();
      return start(
        await prepare(request),
        id,
        `request:${id}`,
        signal,
        (step, total, _detail, preview) => watch?.onStep(step, total, preview),
        watch?.preview ?? false,
      );
    },
  });
  const compatMount = options.timeout === undefined ? {} : { timeout: options.timeout };
  if (options.a1111Api !== false) service.mount(a1111Routes(compat), compatMount);
  if (options.openaiApi !== false) {
    const openai = openAIRoutes({ generator: compat, modelId: service.name });
    // The marker runs only for requests with the token; the routes answer every request in OpenAI's shape.
    service.mount(openai.marker);
    service.mount(openai.routes, { public: true, ...compatMount });
  }

  service.api(
    {
      name: 'defaults',
      input: new QueryInput(z.object({})),
      output: new JSONDescriptor(),
      doc: "GET: the generation defaults a request's left-out fields take (the model's own, from its tiffin_defaults.json and the LoRA merged at start), and the size limit.",
    },
    async () => ({
      ...defaulted,
      scheduler: defaulted.scheduler ?? host?.defaultScheduler ?? null,
      scheduler_config: defaults.scheduler_config ?? {},
      negative_prompt: defaults.negative_prompt ?? null,
      ...(kinds.includes('text2img')
        ? {
            height: defaults.height ?? defaultImageSize(modelDir),
            width: defaults.width ?? defaultImageSize(modelDir),
          }
        : {}),
      max_size: limits.maxSize,
    }),
  );

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

/**
 * Why a generation's signal was aborted: its deadline passed (504), its task was cancelled, or else its client
 * went away (the server aborts with a plain error when the connection closes).
 */
function cancelReason(reason: unknown): 'timeout' | 'cancelled' | 'client_gone' {
  if (isTiffinError(reason) && reason.code === 'DEADLINE_EXCEEDED') return 'timeout';
  if (isTiffinError(reason) && reason.code === 'CANCELLED') return 'cancelled';
  return 'client_gone';
}
