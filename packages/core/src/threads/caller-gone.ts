import { Cancelled } from '../errors/index.js';

/**
 * The error a call gets when its caller's `signal` aborted before the work ended: the signal's reason when it is an
 * error (the server's deadline is a 504, a client gone a 409), else a 409 `CANCELLED` saying what did not happen
 * (`before the model ran its call`).
 */
export function callerGone(signal: AbortSignal, before: string): Error {
  return signal.reason instanceof Error ? signal.reason : new Cancelled(`The caller went away ${before}`);
}
