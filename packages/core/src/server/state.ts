import type { InferenceApi } from '../service/service.js';
import type { LazyAbort } from './lazy-abort.js';

/** What the app's middleware share about one request (Koa `ctx.state`). */
export interface RequestState {
  requestId: string;
  /** The matched route path (metrics label); 'unmatched' when no route matched. */
  endpoint: string;
  /** The API this request targets, if any. */
  api: InferenceApi | undefined;
  /** Fires when the client disconnects or the request times out. */
  abort: LazyAbort;
  /** Run once when the response is over (sent, or the connection closed). */
  onClose: Array<() => void>;
  /** performance.now() when the request entered the pipeline (deadline, metrics and log share it). */
  startedAt: number;
  /** Set once the timeout answered: later writes by the handler are dropped. */
  timedOut: boolean;
}
