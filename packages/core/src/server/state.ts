import type { Invocation } from '../runtime/invocation.js';

/** What the request pipeline tracks about one HTTP request: the runtime's call, plus its route. */
export interface RequestState extends Invocation {
  /** The matched route path (metrics label); 'unmatched' when no route matched. */
  endpoint: string;
  /**
   * performance.now() at which the response is cut off whether or not the client reads it (an event stream's
   * lifetime); unset: only the send deadline's pace applies.
   */
  sendUntil?: number;
}
