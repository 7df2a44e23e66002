import { sseEvent } from '@tiffin/core';
import { pushedEvents } from '@tiffin/core/tasks';
import type { GenerationEvent, GenerationEvents } from './generation-events.js';

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
 * Where a generation's events are filed: tasks by their id (`job:<uuid>`, drawn by the server), synchronous
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

  /** Publishes every event of the generator's stream, in `/progress`'s form; returns the unsubscribe. */
  follow(events: GenerationEvents): () => void {
    return events.subscribe((event) => {
      const key: ProgressKey = event.origin === 'task' ? `job:${event.id}` : `request:${event.id}`;
      this.publish(key, progressEvent(event));
    });
  }

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

/** A generator's event as `/progress` streams it. */
function progressEvent(event: GenerationEvent): ProgressEvent {
  const request_id = event.id;
  switch (event.type) {
    case 'queued':
    case 'started':
      return { request_id, status: event.type };
    case 'step':
      return {
        request_id,
        status: 'step',
        step: event.step,
        total_steps: event.totalSteps,
        timestep: event.timestep,
        ...(event.preview ? { preview: event.preview.dataUrl } : {}),
      };
    case 'done':
      return { request_id, status: 'done', seconds: event.seconds };
    default:
      return { request_id, status: event.type, error: event.message };
  }
}

/**
 * `POST /progress`'s server-sent events: a comment line, then the events of one generation (`requestId`: a
 * request's x-request-id or a job's id) until it ends, or of every generation when `requestId` is absent.
 */
export async function* progressStream(
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
