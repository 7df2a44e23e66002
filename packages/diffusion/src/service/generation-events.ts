import { encodeBmp } from '@tiffin/io-image';
import type { GenerationOrigin } from './generation-queue.js';
import type { JobImage } from './worker-protocol.js';

/** Which generation an event is of. */
export interface GenerationEventBase {
  /** Drawn by the generator for each start: unique, so a subscriber follows one generation whatever its `id`. */
  jobId: string;
  /** The id the generation is known by outside: a request's x-request-id, a task's id, or the job id. */
  id: string;
  origin: GenerationOrigin;
}

/**
 * One event of a generation, in order: `queued` (with the jobs ahead of it) → `started` → `step` (one per denoising
 * step) → `done`, `failed` or `cancelled`.
 */
export type GenerationEvent = GenerationEventBase &
  (
    | { type: 'queued'; position: number }
    | { type: 'started' }
    | { type: 'step'; step: number; totalSteps: number; timestep: number; preview?: StepPreview }
    | { type: 'done'; seconds: number; seeds: number[] }
    | { type: 'failed'; error: unknown; message: string }
    | { type: 'cancelled'; reason: unknown; message: string }
  );

export type GenerationEventType = GenerationEvent['type'];

/** The last event of a generation. */
export function isFinalEvent(event: GenerationEvent): boolean {
  return event.type === 'done' || event.type === 'failed' || event.type === 'cancelled';
}

/**
 * A step's preview image, asked for by the generation: the pixels, and the same as a data URL made on first use,
 * once however many subscribers want it (BMP: encoded synchronously, between steps, with no extra work).
 */
export class StepPreview {
  private url: string | undefined;
  constructor(readonly image: JobImage) {}

  get dataUrl(): string {
    this.url ??= `data:image/bmp;base64,${Buffer.from(encodeBmp(this.image.data, this.image.width, this.image.height)).toString('base64')}`;
    return this.url;
  }
}

type Listener = (event: GenerationEvent) => void;

/**
 * The generator's one stream of progress events: the `/progress` hub, the log, the tasks' progress, the OpenAI and
 * A1111 layers subscribe to every generation or to one (its `jobId`).
 */
export class GenerationEvents {
  private readonly everyListener = new Set<Listener>();
  private readonly byJob = new Map<string, Set<Listener>>();

  /** Calls `listener` with each event from now on, of one generation when `jobId` is given; returns the unsubscribe. */
  subscribe(listener: Listener, jobId?: string): () => void {
    if (jobId === undefined) {
      this.everyListener.add(listener);
      return () => this.everyListener.delete(listener);
    }
    const set = this.byJob.get(jobId) ?? new Set<Listener>();
    this.byJob.set(jobId, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byJob.get(jobId) === set) this.byJob.delete(jobId);
    };
  }

  emit(event: GenerationEvent): void {
    for (const listener of this.everyListener) listener(event);
    const own = this.byJob.get(event.jobId);
    if (own) for (const listener of own) listener(event);
  }
}
