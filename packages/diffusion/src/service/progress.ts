import { pushedEvents } from '@tiffin/core/internal';

/** One progress event of a generation, as logged and streamed by `POST /progress`. */
export interface ProgressEvent {
  request_id: string;
  /** `queued` → `started` → `step` (one per denoising step) → `done`, `failed` or `cancelled`. */
  status: 'queued' | 'started' | 'step' | 'done' | 'failed' | 'cancelled';
  step?: number;
  total_steps?: number;
  timestep?: number;
  seconds?: number;
  error?: string;
  /**
   * Preview after this step (`data:image/bmp;base64,...`), when asked for: decoded by the tiny autoencoder (at most
   * 256 px a side, on some steps) when the server has one, else a latent-size approximation.
   */
  preview?: string;
}

type Listener = (event: ProgressEvent) => void;

/** The last event of a generation. */
export function isFinal(event: ProgressEvent): boolean {
  return event.status === 'done' || event.status === 'failed' || event.status === 'cancelled';
}

/**
 * Where a generation's events are filed: jobs by their id (`job:<uuid>`, drawn by the server), synchronous
 * requests by their request id (`request:<x-request-id>`, which the client may choose). Two namespaces, so a
 * client that sends a job's id as its own request id can neither end nor feed that job's event stream.
 */
export type ProgressKey = `job:${string}` | `request:${string}`;

/** Fan-out of generation progress to `/progress` streams; nothing is kept once a request is finished. */
export class ProgressHub {
  private readonly listeners = new Set<Listener>();
  /** Latest event of each unfinished generation, so a late subscriber sees where it stands. */
  private readonly latest = new Map<ProgressKey, ProgressEvent>();
  private readonly keyOf = new WeakMap<ProgressEvent, ProgressKey>();

  publish(key: ProgressKey, event: ProgressEvent): void {
    this.keyOf.set(event, key);
    if (isFinal(event)) this.latest.delete(key);
    else this.latest.set(key, event);
    for (const listener of this.listeners) listener(event);
  }

  /**
   * Events as they happen (starting with the current state of unfinished generations) until `signal` aborts:
   * those filed under one of `keys`, or every one when `keys` is absent. Following keys, the stream ends with
   * the first final event.
   */
  async *events(signal: AbortSignal, keys?: readonly ProgressKey[]): AsyncGenerator<ProgressEvent> {
    const wanted = (event: ProgressEvent) => !keys || keys.includes(this.keyOf.get(event)!);
    yield* pushedEvents<ProgressEvent>(
      (push) => {
        const listener: Listener = (event) => {
          if (wanted(event)) push(event);
        };
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
      signal,
      { first: [...this.latest.values()].filter(wanted), isLast: keys ? isFinal : undefined },
    );
  }
}
