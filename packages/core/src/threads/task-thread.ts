import { parentPort } from 'node:worker_threads';
import type { TaskAnswer, TaskCall } from './task-protocol.js';
import { wireError } from './thread-errors.js';

/** A task's answer with the buffers to move to the caller instead of copying them. */
export class Transferring<T> {
  constructor(
    readonly value: T,
    readonly transfer: ArrayBuffer[],
  ) {}
}

/** A function a task thread runs: structured-cloneable arguments in, a cloneable value (or `Transferring`) out. */
// biome-ignore lint/suspicious/noExplicitAny: tasks declare their own argument types; the pool checks none.
export type Task = (...args: any[]) => unknown;

/**
 * The thread side of `TaskPool`: a package's task module calls this once with its tasks by name. Each call's
 * answer or error goes back to the pool; a Tiffin error keeps its status and code (a 413 stays a 413).
 */
export function serveTasksInThread(tasks: Record<string, Task>): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasksInThread runs inside a worker thread started by TaskPool');
  port.on('message', ({ id, task, args }: TaskCall) => {
    const post = (answer: TaskAnswer, transfer: ArrayBuffer[] = []) => port.postMessage(answer, transfer);
    const run = tasks[task];
    if (!run) {
      post({ id, error: { message: `no task '${task}' in this thread`, type: 'Error' } });
      return;
    }
    // The thread's own time on the call: the caller's `thread` span carries it (docs/observability.md).
    const started = performance.now();
    Promise.resolve()
      .then(() => run(...args))
      .then(
        (value) => {
          const ms = performance.now() - started;
          if (value instanceof Transferring) post({ id, value: value.value, ms }, value.transfer);
          else post({ id, value, ms });
        },
        (err: unknown) => post({ id, error: wireError(err), ms: performance.now() - started }),
      );
  });
}
