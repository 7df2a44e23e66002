import type { WireError } from '../threads/thread-errors.js';
import type { WireTensor } from './wire-tensors.js';

/** One model call as it crosses to a runner thread. */
export interface WireCall {
  id: number;
  inputs: WireTensor[];
}

/** How one call ended, as it crosses back, with the milliseconds the thread spent on it (`ms`, its own clock). */
export type WireOutcome =
  | { id: number; outputs: WireTensor[]; ms?: number }
  | { id: number; error: WireError; ms?: number };

/**
 * What the runner pool sends a worker thread. `run` carries the calls that were waiting when the thread
 * became free (a burst, run one after another): one message instead of one per call.
 */
export type ToWorker =
  | { type: 'run'; calls: WireCall[] }
  /** These calls of the current burst lost their caller: skip them if they have not started. */
  | { type: 'cancel'; ids: number[] }
  | { type: 'close' };

/** What a worker thread sends back; `results` may answer several calls of a burst at once. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'init-failed'; error: WireError }
  | { type: 'results'; results: WireOutcome[] };

/** What `RunnerPool` hands each worker in `workerData`. */
export interface WorkerBoot {
  /** The framework's worker module (it calls `serveRunnerInThread`). */
  entry: string;
  /** The framework's own start-up data (model path, options). */
  init: unknown;
}
