import { parentPort, workerData } from 'node:worker_threads';
import { wireError } from '../threads/thread-errors.js';
import type { ModelRunner } from './runner.js';
import { fromWire, toWire } from './wire-tensors.js';
import type { FromWorker, ToWorker, WireCall, WireOutcome, WorkerBoot } from './worker-protocol.js';

/** Builds the thread's runner from the framework's start-up data (e.g. opens an ONNX Runtime session). */
export type RunnerLoader = (init: unknown) => Promise<ModelRunner>;

/**
 * Longest a finished call's answer waits in the thread for the burst's next calls (ms). Each message back wakes
 * the event loop; answering several calls of a burst in one message saves that wake-up per call, which on a
 * busy core costs about as much as a small model's run. A call that runs longer than this is answered alone.
 */
export const RESULT_HOLD_MS = 1;

/**
 * The worker-thread side of `RunnerPool`: a framework's worker module calls this once with its loader. The
 * pool sends a thread a burst of calls when it is free (one call, or the calls that were waiting); they run
 * one after another, and their answers go back together while the next run is expected to end within
 * `RESULT_HOLD_MS` of the oldest held answer. Output buffers are moved back, not copied.
 */
export function serveRunnerInThread(load: RunnerLoader): void {
  const port = parentPort;
  if (!port) throw new Error('serveRunnerInThread runs inside a worker thread started by RunnerPool');
  const boot = workerData as WorkerBoot;
  const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  load(boot.init).then(
    (runner) => {
      let lastRunMs = 0;
      const cancelled = new Set<number>();
      const runBurst = async (calls: readonly WireCall[]) => {
        let held: WireOutcome[] = [];
        let moved = new Set<ArrayBuffer>();
        let heldSince = 0;
        const flush = () => {
          if (held.length > 0) post({ type: 'results', results: held }, [...moved]);
          held = [];
          moved = new Set();
        };
        for (const call of calls) {
          // Answer now what would otherwise wait past the hold for this run to end.
          if (held.length > 0 && performance.now() - heldSince + lastRunMs > RESULT_HOLD_MS) flush();
          // After a long run, let the pool's messages in: a cancel for the calls still ahead may be waiting.
          if (lastRunMs > RESULT_HOLD_MS) await new Promise((resolve) => setImmediate(resolve));
          if (cancelled.delete(call.id)) {
            held.push({
              id: call.id,
              error: { message: 'The caller went away before the call ran', type: 'Cancelled' },
            });
            continue;
          }
          const started = performance.now();
          let outcome: WireOutcome;
          try {
            const outputs = await runner.run(fromWire(call.inputs));
            const wire = toWire(outputs, true);
            for (const buffer of wire.moved) moved.add(buffer);
            outcome = { id: call.id, outputs: wire.tensors };
          } catch (err) {
            outcome = { id: call.id, error: wireError(err) };
          }
          const ended = performance.now();
          lastRunMs = ended - started;
          // The thread's own time on the call: the caller's `runner` span carries it (docs/observability.md).
          outcome.ms = lastRunMs;
          held.push(outcome);
          if (held.length === 1) heldSince = ended;
        }
        flush();
        cancelled.clear();
      };
      // Messages are handled in order: the pool sends a thread its next burst only once the last is answered.
      let running: Promise<void> = Promise.resolve();
      port.on('message', (message: ToWorker) => {
        if (message.type === 'cancel') {
          for (const id of message.ids) cancelled.add(id);
          return;
        }
        if (message.type === 'close') {
          running.finally(() => runner.close().finally(() => process.exit(0)));
          return;
        }
        running = runBurst(message.calls);
      });
      post({ type: 'ready' });
    },
    (err: unknown) => post({ type: 'init-failed', error: wireError(err) }),
  );
}
