import type { TaskCall } from '../context/context.js';
import type { InferenceApi } from '../service/service.js';
import type { CallTrace } from '../tracing/call-trace.js';
import type { BodyReservation } from './body-budget.js';
import type { DeadlineWatch } from './deadlines.js';
import type { LazyAbort } from './lazy-abort.js';

/**
 * One call of an API (or, over HTTP, one request to any route) as the runtime tracks it, whatever the
 * transport: the HTTP adapter and the gRPC adapter each fill one in and hand it to the `Runtime`.
 */
export interface Invocation {
  /** Id of this call in logs and the `x-request-id` header. */
  requestId: string;
  /** The API called, if the request targets one. */
  api: InferenceApi | undefined;
  /** Fires when the caller goes away or the deadline passes. */
  abort: LazyAbort;
  /** Run once when the call is over (response sent, or the caller gone). */
  onClose: Array<() => void>;
  /** performance.now() when the call arrived (deadline, metrics and log share it). */
  startedAt: number;
  /** Set once the deadline answered: later results are dropped. */
  timedOut: boolean;
  /** The deadline watching the call's work while it runs (none before, or for an answer given at once). */
  deadlineWatch?: DeadlineWatch | undefined;
  /**
   * Seconds of the deadline of a request that is no API call, set by the mount it is in (`Runtime.retime`,
   * a mount's own `timeout`); unset: the server's `timeout`.
   */
  ownTimeout?: number | undefined;
  /** Set when the call runs as a task: its id and where `ctx.progress` reports go. */
  task?: TaskCall;
  /**
   * The call's timeline (`Server-Timing`) and, when traced, its server span (docs/observability.md); absent when
   * the server does neither.
   */
  trace?: CallTrace | undefined;
  /** RFC 9218 urgency the client asked for, 0 (most urgent) to 7; unset: 3 (docs/spec/io-descriptors.md §10.9). */
  urgency?: number | undefined;
  /** Who made the call, for an API queue's client share (the peer's address, as a task's submit counts it). */
  client?: string | undefined;
  /** Seconds of the client's own deadline (`Tiffin-Timeout`, gRPC's deadline, v2 `parameters.timeout`); the server's caps it. */
  clientTimeout?: number | undefined;
  /** The call's share of the body budget, made by `BodyBudget.reservationFor` when a body is first read. */
  bodyReservation?: BodyReservation;
}
