import type { HttpResponse } from '../http/response.js';
import { ConcurrencyGate } from '../runtime/concurrency-gate.js';
import type { RequestState } from './state.js';

export interface EventStreamOptions {
  /** Streams open at once; one more → 503. */
  maxStreams: number;
  /** Milliseconds without an event before the server ends a stream. */
  idleMs: number;
  /** Milliseconds a stream may stay open in all. */
  lifetimeMs: number;
  /** Seconds sent in `Retry-After` with the 503. */
  retryAfter: number;
}

const EXPIRED = Symbol('expired');

/** How long after its lifetime a stream that did not end itself (its client does not read) is cut off. */
const LIFETIME_GRACE_MS = 1000;

/**
 * Event streams (`text/event-stream` answers: progress feeds that stay open while nothing is computed) live
 * outside the API gate: the call hands its API permit back when its stream starts and takes one of these
 * instead, so open streams cannot keep API calls out. Each stream ends after `idleMs` without an event and
 * after `lifetimeMs` in all (an EventSource client reconnects); its producer is woken through the call's
 * abort signal so that nothing stays subscribed.
 */
export class EventStreams {
  private readonly gate: ConcurrencyGate;

  constructor(private readonly options: EventStreamOptions) {
    this.gate = new ConcurrencyGate(options.maxStreams, options.retryAfter, 'event streams');
  }

  /** Whether `response` is an event stream this gate takes over (a streamed `text/event-stream` body). */
  static isEventStream(response: HttpResponse): boolean {
    if (response.body === null || response.body instanceof Uint8Array) return false;
    const type = response.headers.find(([name]) => name === 'content-type')?.[1] ?? '';
    return type.toLowerCase().startsWith('text/event-stream');
  }

  /**
   * Move `call` from the API gate (`releaseApiPermit`) to the stream gate (503 when full) and bound its body.
   */
  adopt(response: HttpResponse, call: RequestState, releaseApiPermit: () => void): HttpResponse {
    call.onClose.push(this.gate.enter());
    releaseApiPermit();
    // The lifetime holds whether or not the client reads: a stream read ends itself then (below), cleanly; one
    // whose client stopped reading is cut by the send deadline a moment later.
    call.sendUntil = performance.now() + this.options.lifetimeMs + LIFETIME_GRACE_MS;
    const body = response.body as AsyncIterable<Uint8Array>;
    const end = (why: string) => call.abort.abort(new Error(`event stream ended by the server: ${why}`));
    return { ...response, body: bounded(body, this.options, end) };
  }
}

async function* bounded(
  body: AsyncIterable<Uint8Array>,
  { idleMs, lifetimeMs }: EventStreamOptions,
  end: (why: string) => void,
): AsyncGenerator<Uint8Array> {
  const events = body[Symbol.asyncIterator]();
  const endAt = performance.now() + lifetimeMs;
  let timer: NodeJS.Timeout | undefined;
  for (;;) {
    const left = endAt - performance.now();
    const wait = Math.min(idleMs, left);
    const next = events.next();
    const outcome = await Promise.race([
      next,
      new Promise<typeof EXPIRED>((resolve) => {
        timer = setTimeout(resolve, Math.max(wait, 0), EXPIRED);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === EXPIRED) {
      next.catch(() => {});
      end(left <= idleMs ? 'lifetime' : 'idle');
      events.return?.().catch(() => {});
      return;
    }
    if (outcome.done) return;
    yield outcome.value;
  }
}
