import type { ServerResponse } from 'node:http';

export interface SendDeadlineOptions {
  /** Milliseconds a client may go without taking `minRate` bytes a second of an answer it has pending. */
  stallMs: number;
  /** Bytes a second a client must take, on average since its last progress, while bytes wait for it. */
  minRate: number;
}

/** Bytes of an answer the connection's kernel buffers take without the client reading. */
const KERNEL_TAKES = 64 * 1024;

/** Why a response was cut off: its client stopped reading, or the response passed its end time. */
export type SendCut = 'stalled' | 'deadline';

interface Watched {
  readonly res: ServerResponse;
  /** performance.now() after which the response is cut whatever its pace (an event stream's lifetime). */
  readonly until: number;
  /** The connection's send position at the last sweep (`sendPosition`). */
  completed: number;
  queued: number;
  /** Bytes the client took since `progressAt`, when it last took its due. */
  taken: number;
  progressAt: number;
}

/**
 * The one send deadline of the HTTP server: once a response's head is out, its client must keep taking the
 * body (at least `minRate` bytes a second, checked over `stallMs`), and a response with an end time (an
 * event stream's lifetime) ends then, whether or not the client reads. A response that fails is destroyed:
 * its connection closes, so the request's permit, the stream slot and the buffered bytes are released
 * (Node's socket timeout cannot do this: it sees bytes arrive, not bytes leave). One timer for every watched
 * response, armed only while some are watched; a small answer that left in one write is never watched.
 */
export class SendDeadlines {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | undefined;
  private readonly tickMs: number;

  constructor(
    private readonly options: SendDeadlineOptions,
    /** Hears every response cut off (metrics). */
    private readonly onCut: (why: SendCut) => void = () => {},
  ) {
    this.tickMs = Math.max(10, Math.min(1000, options.stallMs / 2));
  }

  /** Responses watched now (tests, diagnostics). */
  get size(): number {
    return this.watched.size;
  }

  /**
   * Watch `res` (its head written, its body handed over) until it closes; `until` is a performance.now()
   * time at which it ends regardless (none: Infinity). `onClose` is the request's list of close callbacks.
   */
  watch(res: ServerResponse, onClose: Array<() => void>, until = Number.POSITIVE_INFINITY): void {
    if (!res.headersSent || res.destroyed || res.writableFinished) return;
    // A whole answer small enough for the kernel's buffers, with no end time: it leaves whether or not the
    // client reads (its 'close' releases the permit), so it needs no watching (most answers: no cost).
    if (until === Number.POSITIVE_INFINITY && res.writableEnded && res.writableLength <= KERNEL_TAKES) return;
    const now = performance.now();
    const entry: Watched = { res, until, completed: 0, queued: 0, taken: 0, progressAt: now };
    readPosition(entry);
    this.watched.add(entry);
    onClose.push(() => this.watched.delete(entry));
    this.timer ??= setInterval(() => this.sweep(), this.tickMs).unref();
  }

  private sweep(): void {
    const now = performance.now();
    const { stallMs, minRate } = this.options;
    for (const entry of this.watched) {
      const { res } = entry;
      if (res.destroyed) {
        this.watched.delete(entry);
        continue;
      }
      if (now >= entry.until) {
        this.cut(entry, 'deadline');
        continue;
      }
      entry.taken += readPosition(entry);
      // Nothing waits for the client (a stream waiting for its producer): not the client's stall.
      if (
        res.writableLength === 0 ||
        entry.taken >= Math.max(1, (minRate * (now - entry.progressAt)) / 1000)
      ) {
        entry.taken = 0;
        entry.progressAt = now;
      } else if (now - entry.progressAt >= stallMs) {
        this.cut(entry, 'stalled');
      }
    }
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private cut(entry: Watched, why: SendCut): void {
    this.watched.delete(entry);
    this.onCut(why);
    // Closing the connection is the only way to take back what was written; 'close' then releases the rest.
    entry.res.destroy();
  }
}

/**
 * Bytes the kernel took from the connection since the entry's last reading, which it updates. Writes that
 * completed show in the socket's counters; a large write in progress (a whole answer is one write) shows only
 * in libuv's queue of its unwritten bytes, which Node keeps on the socket's handle (`writeQueueSize`, no
 * public name; without it, progress is seen a completed write at a time).
 */
function readPosition(entry: Watched): number {
  const socket = entry.res.socket;
  if (!socket) return 0;
  const completed = socket.bytesWritten - socket.writableLength;
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: unknown } })._handle;
  const queued = typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
  const taken = completed > entry.completed ? completed - entry.completed : entry.queued - queued;
  entry.completed = completed;
  entry.queued = queued;
  return Math.max(0, taken);
}
