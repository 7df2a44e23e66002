import { Worker } from 'node:worker_threads';
import { InternalServerError, ServiceUnavailable, TiffinError } from '@tiffin/core';
import { GenerationCancelled } from '../pipeline/cancel.js';
import type { SchedulerName } from '../schedulers/types.js';
import { ModelFolderError } from '../weights/folder.js';
import { SafetensorsError } from '../weights/safetensors.js';
import { ModelTooLargeError } from './model-fit.js';
import type {
  JobImage,
  JobInput,
  JobLora,
  WarmUp,
  WorkerError,
  WorkerInit,
  WorkerMessage,
} from './worker-protocol.js';

/** Diffusion's own error classes, rebuilt as themselves so the service (and callers) can tell them apart. */
const DIFFUSION_ERRORS: Readonly<Record<string, new (message: string) => TiffinError>> = {
  GenerationCancelled,
  ModelFolderError,
  ModelTooLargeError,
  SafetensorsError,
};

/** A Tiffin error from the worker thread: its class name, status and code carried over as they were. */
class WorkerThreadError extends TiffinError {
  constructor(error: WorkerError & { status: number; code: string }) {
    super(error.message, { errorCode: error.status, code: error.code });
    this.name = error.type;
  }
}

/**
 * The worker's error on this side of the thread boundary: a diffusion class as itself, any other
 * Tiffin error with its status, code and type unchanged, anything else an internal error.
 */
function rebuild(error: WorkerError): TiffinError {
  const Own = DIFFUSION_ERRORS[error.type];
  if (Own) return new Own(error.message);
  if (error.status !== undefined && error.code !== undefined)
    return new WorkerThreadError({ ...error, status: error.status, code: error.code });
  return new InternalServerError(error.message);
}

export interface JobProgress {
  step: number;
  totalSteps: number;
  timestep: number;
  /** Low-resolution RGB preview of the latents, when the job asked for one. */
  preview?: JobImage;
}

export interface JobOutcome {
  /** One per `num_images_per_prompt`, with its seed at the same index. */
  images: JobImage[];
  seeds: number[];
  /** Seconds the worker spent on the job (LoRA preparation + generation). */
  seconds: number;
}

interface Pending {
  resolve: (outcome: JobOutcome) => void;
  reject: (err: Error) => void;
  onProgress?: (progress: JobProgress) => void;
}

/**
 * From source (a `.ts` module URL: tests, `pnpm cli`) the worker starts on a tiny .mjs bootstrap that
 * registers tsx, because a worker cannot import TypeScript itself; from the build it starts on the
 * separately bundled `model-worker.js` next to this module's bundle.
 */
function workerEntry(): { file: URL; entry?: string; execArgv: string[] } {
  if (import.meta.url.endsWith('.ts')) {
    return {
      file: new URL('./worker-bootstrap.mjs', import.meta.url),
      entry: new URL('./model-worker.ts', import.meta.url).href,
      // Workspace packages resolve to their sources under the `source` export condition.
      execArgv: ['--conditions=source'],
    };
  }
  return { file: new URL('./model-worker.js', import.meta.url), execArgv: [] };
}

/** The thread that owns the model: jobs go in one at a time, images and progress come back. */
export class ModelWorkerHost {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private failure: TiffinError | undefined;

  private constructor(
    private readonly worker: Worker,
    /** Output size when a request gives none (unet sample_size × 8). */
    readonly defaultSize: number,
    readonly backend: string,
    readonly defaultScheduler: SchedulerName,
    /** The start-up generation that proved the model runs. */
    readonly warmUp: WarmUp,
  ) {
    worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    worker.on('error', (err) =>
      this.fail(new InternalServerError(`The model worker crashed: ${err.message}`)),
    );
    worker.on('exit', (code) => this.fail(new ServiceUnavailable(`The model worker exited (code ${code})`)));
  }

  /** Start the worker and wait until the pipeline is loaded. */
  static start(init: WorkerInit): Promise<ModelWorkerHost> {
    const { file, entry, execArgv } = workerEntry();
    const worker = new Worker(file, { workerData: { init, entry }, execArgv });
    return new Promise((resolve, reject) => {
      const onExit = (code: number) =>
        reject(new Error(`The model worker exited while loading (code ${code})`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'init-failed') {
          worker.off('message', onMessage);
          worker.off('exit', onExit);
          worker.terminate().catch(() => {});
          const error = rebuild(message.error);
          error.message = `Could not start the diffusion pipeline from ${init.modelDir}: ${error.message}`;
          reject(error);
        } else if (message.type === 'ready') {
          worker.off('message', onMessage);
          worker.off('error', reject);
          worker.off('exit', onExit);
          resolve(
            new ModelWorkerHost(
              worker,
              message.defaultSize,
              message.backend,
              message.defaultScheduler,
              message.warmUp,
            ),
          );
        }
      };
      worker.on('message', onMessage);
    });
  }

  /**
   * Run one job on the worker. The caller (the queue) makes sure only one runs at a time. Aborting
   * `signal` cancels the job at its next step; the promise settles (with `GenerationCancelled`) once the
   * worker has stopped, so the next job never overlaps it.
   */
  run(
    requestId: string,
    input: JobInput,
    options: {
      loras?: JobLora[];
      preview?: boolean;
      onProgress?: (progress: JobProgress) => void;
      signal?: AbortSignal;
    } = {},
  ): Promise<JobOutcome> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const { signal } = options;
    const cancel = () => this.worker.postMessage({ type: 'cancel', id });
    return new Promise<JobOutcome>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress: options.onProgress });
      this.worker.postMessage({
        type: 'job',
        id,
        requestId,
        input,
        loras: options.loras ?? [],
        preview: options.preview ?? false,
      });
      if (signal?.aborted) cancel();
      else signal?.addEventListener('abort', cancel, { once: true });
    }).finally(() => signal?.removeEventListener('abort', cancel));
  }

  /** Let the running job finish, then stop the worker. */
  async close(): Promise<void> {
    if (this.failure) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ type: 'shutdown' });
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 30_000).unref());
    await Promise.race([exited, timeout]);
    await this.worker.terminate();
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type === 'ready' || message.type === 'init-failed') return;
    const pending = this.pending.get(message.id);
    if (!pending) return;
    if (message.type === 'progress') {
      pending.onProgress?.({
        step: message.step,
        totalSteps: message.totalSteps,
        timestep: message.timestep,
        ...(message.preview ? { preview: message.preview } : {}),
      });
      return;
    }
    this.pending.delete(message.id);
    if (message.type === 'done') {
      pending.resolve({ images: message.images, seeds: message.seeds, seconds: message.seconds });
    } else {
      pending.reject(rebuild(message.error));
    }
  }

  /** Why the worker can no longer run jobs (it crashed or exited), or `undefined` while it can. */
  get failureReason(): string | undefined {
    return this.failure?.message;
  }

  private fail(err: TiffinError): void {
    this.failure ??= err;
    for (const pending of this.pending.values()) pending.reject(err);
    this.pending.clear();
  }
}
