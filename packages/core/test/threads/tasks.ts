// A task module for task-pool.test.ts, run in TaskPool's threads.
import { threadId } from 'node:worker_threads';
import { PayloadTooLarge } from '../../src/errors/index.js';
import { serveTasksInThread, Transferring } from '../../src/threads/index.js';

serveTasksInThread({
  sum: (values: Float64Array) => values.reduce((a, b) => a + b, 0),
  squares: (n: number) => {
    const out = Float64Array.from({ length: n }, (_, i) => i * i);
    return new Transferring(out, [out.buffer]);
  },
  refuse: (cells: number) => {
    throw new PayloadTooLarge(`${cells} cells, over the limit`);
  },
  fail: () => {
    throw new RangeError('internal detail');
  },
  crash: () => process.exit(3),
  busy: (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until);
    return threadId;
  },
});
