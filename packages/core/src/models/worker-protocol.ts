import type { WireError } from '../threads/thread-errors.js';
import type { WireTensor } from './wire-tensors.js';

/** What the runner pool sends a worker thread. */
export type ToWorker = { type: 'run'; id: number; inputs: WireTensor[] } | { type: 'close' };

/** What a worker thread sends back. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'init-failed'; error: WireError }
  | { type: 'result'; id: number; outputs: WireTensor[] }
  | { type: 'error'; id: number; error: WireError };

/** What `RunnerPool` hands each worker in `workerData`. */
export interface WorkerBoot {
  /** The framework's worker module (it calls `serveRunnerInThread`). */
  entry: string;
  /** The framework's own start-up data (model path, options). */
  init: unknown;
}
