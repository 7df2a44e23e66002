import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BadInput, type Logger, NDArray, ServiceUnavailable } from '@tiffin/core';
import { Cancelled, endWorkSpan, tracedWork } from '@tiffin/core/internal';
import type { BackendName } from '../backend.js';
import { assertBackendPackages } from '../backend-packages.js';
import { GenerationCancelled } from '../pipeline/cancel.js';
import { type Checkpoint, CheckpointCatalog, startCheckpoint } from './checkpoint-catalog.js';
import { type GenerationEventBase, GenerationEvents, StepPreview } from './generation-events.js';
import { generationInfotext } from './generation-infotext.js';
import { type GenerationOrigin, GenerationQueue } from './generation-queue.js';
import type { GeneratedImages } from './images-output.js';
import type { GenerationKindName, GenerationRequest, KindContext } from './kinds/index.js';
import { type LoraListing, LoraRoots } from './lora-roots.js';
import { pipelineFamily } from './model-config.js';
import { type ServedModel, servedModel } from './model-hash.js';
import { prepareGeneration } from './prepare-generation.js';
import { ResidentPipelines } from './resident-pipelines.js';
import { jobCost } from './step-clock.js';
import type { JobOutcome, ModelWorkerHost } from './worker-host.js';
import type { WorkerInit } from './worker-protocol.js';

const CANCELLED_LOADING = 'The request was cancelled while its checkpoint loaded, before generation started';

/** What a generator is made of: the model, what its kinds know of it, and its worker's settings. */
export interface GeneratorOptions {
  /** The kinds the service serves, and what they know of the model (limits, sizes, defaults). */
  kinds: readonly GenerationKindName[];
  context: KindContext;
  /** The model folder's name (what the compatible APIs list). */
  modelName: string;
  /** The model worker's start settings (its `modelDir` the start model's). */
  worker: WorkerInit;
  /** The checkpoints requests may choose (the start model the default; default: the start model alone). */
  catalog?: CheckpointCatalog;
  /** Pipelines kept loaded at once, least recently used evicted first (default 1). */
  maxLoadedModels?: number;
  /** Folders per-request LoRA files may come from; missing ones hold none. */
  loraDirs: ReadonlyArray<string | undefined>;
  /** Requests that may wait behind the running one before a 503. */
  maxQueue: number;
}

/** One generation to start. */
export interface GenerateOptions {
  /** A kind's request (`GENERATION_KINDS[kind].toRequest`, or `compatRequest` for a compatible API's body). */
  request: GenerationRequest;
  /** Who it is for, which sets its place in the queue (default `request`). */
  origin?: GenerationOrigin;
  /** The id its events carry: a request's x-request-id, a task's id (default: the job id). */
  id?: string;
  /** Aborting it (client gone, deadline passed, task cancelled) drops it from the queue or stops it at its next step. */
  signal?: AbortSignal;
  /** Whether its step events carry a preview image. */
  preview?: boolean;
}

/** A started generation. */
export interface GenerationHandle {
  /** Unique to this start: the key of its events (`generator.events.subscribe(listener, jobId)`). */
  readonly jobId: string;
  /** Its images, seeds and the output the request asked for; rejects as it failed or was cancelled. */
  readonly result: Promise<GeneratedImages>;
  /** Stops it as its signal would (a `CANCELLED` reason unless given one). */
  cancel(reason?: unknown): void;
}

/**
 * The generation path of a diffusion service: the model worker thread, the bounded queue in front of it, the
 * folders LoRA files may come from, and one stream of progress events (`events`) that every consumer follows.
 * The native APIs, their tasks and the compatible APIs all start generations here (`start`).
 */
export class Generator {
  readonly events = new GenerationEvents();
  readonly queue: GenerationQueue;
  /** The kinds served (`text2img`, `img2img`, `inpaint`). */
  readonly kinds: readonly string[];
  readonly context: KindContext;
  readonly modelName: string;
  /** The checkpoints requests may choose by name (`model`). */
  readonly catalog: CheckpointCatalog;
  /** The loaded model workers, one per checkpoint, under `--max-loaded-models`. */
  readonly pipelines: ResidentPipelines;
  private host: ModelWorkerHost | undefined;
  private roots: LoraRoots | undefined;
  private logger: Logger | undefined;

  constructor(private readonly options: GeneratorOptions) {
    this.kinds = options.kinds;
    this.context = options.context;
    this.modelName = options.modelName;
    this.catalog =
      options.catalog ?? new CheckpointCatalog(startCheckpoint(options.worker.modelDir), undefined);
    this.pipelines = new ResidentPipelines(options.worker, options.maxLoadedModels ?? 1);
    this.queue = new GenerationQueue(options.maxQueue, 1);
  }

  /** Start the worker (loading the model and warming it up) and find the LoRA folders. */
  async open(logger: Logger): Promise<void> {
    const { worker } = this.options;
    // Same default as the worker's backend selection: the option, else $TIFFIN_TF_BACKEND.
    assertBackendPackages(worker.backend ?? (process.env.TIFFIN_TF_BACKEND as BackendName | undefined));
    const roots = await LoraRoots.create(this.options.loraDirs);
    const host = await this.pipelines.acquire(this.catalog.start);
    this.logger = logger;
    this.roots = roots;
    this.host = host;
    const { warmUp } = host;
    for (const line of host.startLog) logger.log('info', line);
    this.queue.clock.recordStep(warmUp.unitsPerStep, warmUp.stepSeconds);
    logger.log('info', 'diffusion model ready', {
      modelDir: worker.modelDir,
      checkpoints: this.catalog.list().length,
      maxLoadedModels: this.pipelines.maxLoaded,
      backend: host.backend,
      defaultSize: host.defaultSize,
      loraRoots: roots.directories,
      warmUp: `${warmUp.steps} steps at ${warmUp.size}×${warmUp.size} in ${warmUp.seconds.toFixed(2)} s`,
    });
  }

  /** Let the running generation finish, then stop the workers. */
  async close(): Promise<void> {
    await this.pipelines.close();
  }

  /** Why a loaded worker can no longer generate (it crashed or exited), or `undefined` while all can. */
  get failureReason(): string | undefined {
    return this.pipelines.failureReason;
  }

  /** The model's folder (or checkpoint file), as the service was started with it. */
  get modelDir(): string {
    return this.options.worker.modelDir;
  }

  /** The scheduler of the model's own config, once the worker has loaded it. */
  get defaultScheduler(): string | null {
    return this.host?.defaultScheduler ?? null;
  }

  /** The LoRA folders, once open. */
  get loraRoots(): LoraRoots | undefined {
    return this.roots;
  }

  /** The LoRA files requests may name (none while the model loads). */
  async listLoras(): Promise<LoraListing[]> {
    return this.roots ? this.roots.list() : [];
  }

  /** The largest side a request may ask for. */
  get maxSize(): number {
    return this.context.limits.maxSize;
  }

  /** Most images per request. */
  get maxImages(): number {
    return this.context.limits.maxImages;
  }

  /** The model's own output side. */
  get defaultSize(): number {
    return this.context.defaultSize;
  }

  /** The values a request's left-out scheduler, steps and guidance take. */
  get defaults(): { scheduler: string | null; num_inference_steps: number; guidance_scale: number } {
    const { defaulted } = this.context;
    return { ...defaulted, scheduler: defaulted.scheduler ?? this.defaultScheduler };
  }

  /**
   * Start a generation: its LoRAs resolved, then queued (a full queue refuses a request at once: 503) and run on
   * the worker, its progress on `events` under the handle's `jobId`.
   */
  start(options: GenerateOptions): GenerationHandle {
    const jobId = randomUUID();
    const own = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, own.signal]) : own.signal;
    const base: GenerationEventBase = { jobId, id: options.id ?? jobId, origin: options.origin ?? 'request' };
    const result = this.run(options.request, base, signal, options.preview ?? false);
    return {
      jobId,
      result,
      cancel: (reason) => own.abort(reason ?? new Cancelled(`generation ${base.id} was cancelled`)),
    };
  }

  private async run(
    request: GenerationRequest,
    base: GenerationEventBase,
    signal: AbortSignal,
    preview: boolean,
  ): Promise<GeneratedImages> {
    const { host, roots } = this;
    if (!host || !roots) throw new ServiceUnavailable('The model is still loading; try again shortly');
    // An unknown checkpoint is refused now (404), before the request takes a place in the queue.
    const checkpoint = this.catalog.resolve(request.model);
    this.assertSameFamily(checkpoint);
    const { input, loras } = await prepareGeneration(roots, request, this.context.limits.maxSteps, signal);
    // The checkpoint's name and hash for the images' infotext, hashed (once, cached) while the job waits and runs.
    const model: Promise<ServedModel | null> = Promise.resolve()
      .then(() => servedModel(checkpoint.path))
      .catch(() => null);
    let defaultScheduler: string | null = null;
    const emit = this.events.emit.bind(this.events);
    const position = this.queue.ahead(base.origin);
    emit({ ...base, type: 'queued', position });
    // Traced (docs/observability.md): the wait for its turn and the generation, children of the caller's span
    // (the API's run span, a task's), whichever generation's end lets this one start.
    const traced = tracedWork();
    const queuedAt = performance.now();
    let span: ReturnType<NonNullable<typeof traced>['start']> | undefined;
    let outcome: JobOutcome;
    try {
      outcome = await this.queue.submit(
        async (job) => {
          traced
            ?.start('generation queue', { 'tiffin.generation.ahead': position }, queuedAt)
            .end(performance.now());
          // Its turn came: the generations ahead have finished, so a switch never stops one on the old model.
          span = traced?.start('generation', {
            'tiffin.generation.kind': input.kind,
            'tiffin.generation.model': checkpoint.name,
            'tiffin.generation.width': input.width,
            'tiffin.generation.height': input.height,
            'tiffin.generation.images': input.params.num_images_per_prompt ?? 1,
          });
          const worker = await this.workerFor(checkpoint);
          // Its client left (or its deadline passed) while the checkpoint loaded: the load is kept for the
          // requests after it, but this generation never starts.
          if (signal.aborted) throw new GenerationCancelled(CANCELLED_LOADING);
          defaultScheduler = worker.defaultScheduler;
          emit({ ...base, type: 'started' });
          return worker.run(base.id, input, {
            loras,
            signal,
            preview,
            onProgress: (p) => {
              job.stepDone(p.step);
              const { step, totalSteps, timestep } = p;
              if (step === 1) span?.setAttribute('tiffin.generation.steps', totalSteps);
              span?.addEvent('step', { step, 'step.total': totalSteps, timestep });
              const image = p.preview ? { preview: new StepPreview(p.preview) } : {};
              emit({ ...base, type: 'step', step, totalSteps, timestep, ...image });
            },
          });
        },
        { signal, cost: jobCost(input), origin: base.origin },
      );
    } catch (err) {
      if (span) endWorkSpan(span, err);
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof GenerationCancelled)
        emit({ ...base, type: 'cancelled', reason: signal.reason, message });
      else emit({ ...base, type: 'failed', error: err, message });
      throw err;
    }
    if (span) {
      span.setAttribute('tiffin.generation.worker_seconds', outcome.seconds);
      endWorkSpan(span);
    }
    emit({ ...base, type: 'done', seconds: outcome.seconds, seeds: outcome.seeds });
    const record = { input, loras, defaultScheduler, model: await model };
    return {
      images: outcome.images.map((image) => new NDArray(image.data, [image.height, image.width, 3], 'uint8')),
      seeds: outcome.seeds,
      infotexts: outcome.images.map((image, k) =>
        generationInfotext(record, outcome.seeds[k], image.width, image.height),
      ),
      format: request.output.format,
      quality: request.output.quality,
    };
  }

  /**
   * Requests are checked against the start model's family (SDXL's fields, sizes): a folder of another family is
   * refused (400) rather than run with bounds made for another model. A single file's family is known once loaded.
   */
  private assertSameFamily(checkpoint: Checkpoint): void {
    if (checkpoint === this.catalog.start || !existsSync(join(checkpoint.path, 'model_index.json'))) return;
    let family: string;
    try {
      family = pipelineFamily(checkpoint.path);
    } catch {
      return; // Unreadable: its load says why.
    }
    if (family !== this.context.family)
      throw new BadInput(
        `model ${JSON.stringify(checkpoint.name)} is an ${family === 'sdxl' ? 'SDXL' : 'SD 1.x/2.x'} checkpoint; this service serves ${this.context.family === 'sdxl' ? 'SDXL' : 'SD 1.x/2.x'} checkpoints (its start model's family)`,
      );
  }

  /** The worker of `checkpoint`, loaded (and the least recently used evicted) when it is not resident. */
  private async workerFor(checkpoint: Checkpoint): Promise<ModelWorkerHost> {
    const before = this.pipelines.loads;
    const started = performance.now();
    let worker: ModelWorkerHost;
    try {
      worker = await this.pipelines.acquire(checkpoint);
    } catch (err) {
      // A checkpoint that does not load fails its request and leaves the others serving; the client is told
      // why by the checkpoint's name, never by its server path (the log has the path).
      this.logger?.log('warn', 'diffusion checkpoint failed to load', {
        model: checkpoint.name,
        error: err instanceof Error ? err.message : String(err),
      });
      if (err instanceof Error) {
        const dir = this.catalog.dir;
        let message = err.message.split(checkpoint.path).join(checkpoint.name);
        if (dir !== undefined) message = message.split(dir).join('<models-dir>');
        err.message = message;
      }
      throw err;
    }
    if (this.pipelines.loads !== before)
      this.logger?.log('info', 'diffusion checkpoint loaded', {
        model: checkpoint.name,
        seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
        loaded: this.pipelines.loaded.length,
      });
    return worker;
  }
}
