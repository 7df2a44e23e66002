import { parentPort, workerData } from 'node:worker_threads';
import { wireError } from '../threads/thread-errors.js';
import type { ModelRunner } from './runner.js';
import { fromWire, toWire } from './wire-tensors.js';
import type { FromWorker, ToWorker, WorkerBoot } from './worker-protocol.js';

/** Builds the thread's runner from the framework's start-up data (e.g. opens an ONNX Runtime session). */
export type RunnerLoader = (init: unknown) => Promise<ModelRunner>;

/**
 * The worker-thread side of `RunnerPool`: a framework's worker module calls this once with its loader. Calls
 * arrive one at a time per thread (the pool sends a thread one call, waits for its answer); output buffers are
 * moved back, not copied.
 */
export function serveRunnerInThread(load: RunnerLoader): void {
  const port = parentPort;
  if (!port) throw new Error('serveRunnerInThread runs inside a worker thread started by RunnerPool');
  const boot = workerData as WorkerBoot;
  const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  load(boot.init).then(
    (runner) => {
      port.on('message', (message: ToWorker) => {
        if (message.type === 'close') {
          // Messages are handled in order: the call before this one has answered, so the runtime is idle.
          runner.close().finally(() => process.exit(0));
          return;
        }
        runner.run(fromWire(message.inputs)).then(
          (outputs) => {
            const { tensors, moved } = toWire(outputs, true);
            post({ type: 'result', id: message.id, outputs: tensors }, moved);
          },
          (err: unknown) => post({ type: 'error', id: message.id, error: wireError(err) }),
        );
      });
      post({ type: 'ready' });
    },
    (err: unknown) => post({ type: 'init-failed', error: wireError(err) }),
  );
}
