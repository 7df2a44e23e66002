import { Counter, Gauge, type Registry } from 'prom-client';
import { ServiceUnavailable } from '../errors/index.js';

/** The default bound of a `BodyBudget`: eight bodies of the default 32 MiB `maxBodySize`. */
export const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;

/** The share of the budget one call's body holds: grown as its bytes arrive, given back when the call closes. */
export interface BodyReservation {
  /**
   * Hold `total` bytes for the call's body in all (what has arrived so far; readers that watch the same body
   * report the same bytes, so the largest total counts, never the sum). Throws the 503 `BODY_BUDGET_FULL`
   * when the budget cannot hold them, or when the call is over: the caller then keeps none of the new bytes.
   */
  reach(total: number): void;
}

/**
 * A bound on the request-body bytes held across every call in flight, on every transport that reads a body
 * (HTTP APIs, mounted routes, the Open Inference Protocol, gRPC messages): each body is counted as its bytes
 * arrive, before they are kept, and a body that would take the total past `maxBytes` is refused with 503
 * `BODY_BUDGET_FULL` and `Retry-After`. The per-request `maxBodySize` bounds one body; this bounds them all
 * together, so many slow or stalled uploads cannot grow the process without limit. Bytes are given back when
 * their call closes (answer sent or caller gone), since the body is held until then.
 */
export class BodyBudget {
  /** Bytes of bodies held now; changed by the reservations only (`held` is the public read). */
  heldBytes = 0;

  constructor(
    readonly maxBytes: number,
    private readonly retryAfterSeconds: number,
    /** Told of every body refused (a metric). */
    private readonly onShed: () => void = () => {},
  ) {}

  /** Bytes of bodies held now. */
  get held(): number {
    return this.heldBytes;
  }

  /**
   * The reservation of `call`'s body (one per call, whoever reads the body); it holds nothing until it grows,
   * and gives its bytes back when the call closes.
   */
  // The call's two fields by shape, not `Invocation` (which names `BodyReservation`): no import cycle.
  reservationFor(call: { onClose: Array<() => void>; bodyReservation?: BodyReservation }): BodyReservation {
    // Kept on the call itself: a WeakMap keyed by short-lived calls costs every young-generation GC a pass
    // over its entries, which showed as most of a small request's CPU.
    call.bodyReservation ??= new Reservation(this, call.onClose);
    return call.bodyReservation;
  }

  /**
   * A reservation of its own, for a transport without an `Invocation` yet (a gRPC message arriving):
   * `onFirstBytes` is handed its release when it first holds bytes.
   */
  open(onFirstBytes: (release: () => void) => void): BodyReservation {
    return new Reservation(this, onFirstBytes);
  }

  /** The 503 `BODY_BUDGET_FULL` with `message` (a body whose call is over; a body that does not fit: `shed`). */
  refusal(message: string): ServiceUnavailable {
    return new ServiceUnavailable(message, {
      code: 'BODY_BUDGET_FULL',
      headers: { 'retry-after': String(this.retryAfterSeconds) },
    });
  }

  /** A body refused for want of room: counted, and the 503. */
  shed(): ServiceUnavailable {
    this.onShed();
    return this.refusal(
      `The server holds its limit of ${this.maxBytes} bytes of request bodies; try again shortly`,
    );
  }
}

/**
 * One body's share of a `BodyBudget`. A class, not closures: one object per call, its release bound only once
 * it holds bytes. Its release goes to `onClose` (the call's close callbacks) or is handed to the function.
 */
class Reservation implements BodyReservation {
  // Set in the constructor, not as field initializers: one function less on every call.
  declare private readonly budget: BodyBudget;
  declare private readonly onFirstBytes: Array<() => void> | ((release: () => void) => void);
  declare private bytes: number;
  declare private closed: boolean;

  constructor(budget: BodyBudget, onFirstBytes: Array<() => void> | ((release: () => void) => void)) {
    this.budget = budget;
    this.onFirstBytes = onFirstBytes;
    this.bytes = 0;
    this.closed = false;
  }

  reach(total: number): void {
    const budget = this.budget;
    if (this.closed) throw budget.refusal('The request is over');
    const more = total - this.bytes;
    if (more <= 0) return;
    if (budget.heldBytes + more > budget.maxBytes) throw budget.shed();
    budget.heldBytes += more;
    const first = this.bytes === 0;
    this.bytes = total;
    if (!first) return;
    const release = this.release.bind(this);
    if (typeof this.onFirstBytes === 'function') this.onFirstBytes(release);
    else this.onFirstBytes.push(release);
  }

  private release(): void {
    this.closed = true;
    this.budget.heldBytes -= this.bytes;
    this.bytes = 0;
  }
}

/**
 * The budget's metrics in `registry`: `tiffin_api_server_bodies_shed_total` (bodies refused) and
 * `tiffin_api_server_body_bytes_held` (bytes held now, at scrape time). Returns the shed counter's `inc`.
 */
export function bodyBudgetMetrics(registry: Registry, serviceName: string, held: () => number): () => void {
  const shed = new Counter({
    name: 'tiffin_api_server_bodies_shed_total',
    help: 'Request bodies refused with 503 BODY_BUDGET_FULL: the bytes of bodies held across calls were at their limit',
    labelNames: ['service_name'],
    registers: [registry],
  });
  new Gauge({
    name: 'tiffin_api_server_body_bytes_held',
    help: 'Bytes of request bodies held by the calls in flight (bounded by maxBufferedBytes)',
    labelNames: ['service_name'],
    registers: [registry],
    collect() {
      this.set({ service_name: serviceName }, held());
    },
  });
  const labels = { service_name: serviceName };
  return () => shed.inc(labels);
}
