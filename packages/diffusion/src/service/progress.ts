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
  /** Low-resolution preview of the latents after this step (`data:image/bmp;base64,...`), when asked for. */
  preview?: string;
}

type Listener = (event: ProgressEvent) => void;

/** The last event of a generation. */
export function isFinal(event: ProgressEvent): boolean {
  return event.status === 'done' || event.status === 'failed' || event.status === 'cancelled';
}

/** Fan-out of generation progress to `/progress` streams; nothing is kept once a request is finished. */
export class ProgressHub {
  private readonly listeners = new Set<Listener>();
  /** Latest event of each unfinished request, so a late subscriber sees where it stands. */
  private readonly latest = new Map<string, ProgressEvent>();

  publish(event: ProgressEvent): void {
    if (isFinal(event)) this.latest.delete(event.request_id);
    else this.latest.set(event.request_id, event);
    for (const listener of this.listeners) listener(event);
  }

  /** Events as they happen (starting with the current state of unfinished requests) until `signal` aborts. */
  async *events(signal: AbortSignal, requestId?: string): AsyncGenerator<ProgressEvent> {
    const buffered: ProgressEvent[] = [...this.latest.values()].filter(
      (e) => !requestId || e.request_id === requestId,
    );
    let wake: (() => void) | undefined;
    const listener: Listener = (event) => {
      if (requestId && event.request_id !== requestId) return;
      buffered.push(event);
      wake?.();
    };
    const onAbort = () => wake?.();
    this.listeners.add(listener);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const event = buffered.shift();
        if (!event) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        yield event;
        // Following one request: its stream ends with its last event.
        if (requestId && isFinal(event)) return;
      }
    } finally {
      this.listeners.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
