/**
 * Child process for the priority bench: quiet `serve()` of one API with a queue of its own (`concurrency`
 * BENCH_CONCURRENCY, default 2; a queue large enough never to refuse) whose function waits BENCH_WORK_MS
 * milliseconds (default 2) off the event loop, as a model on runner threads does. Prints its URL.
 */
import { JSON as JSONDescriptor, Service, serve } from '@tiffin/core';

const workMs = Number(process.env.BENCH_WORK_MS ?? 2);
const svc = new Service('bench_priority');
svc.api(
  {
    input: new JSONDescriptor(),
    output: new JSONDescriptor(),
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 2),
    queue: 100_000,
    queuePerClient: 100_000,
  },
  async function job(input) {
    await new Promise((resolve) => setTimeout(resolve, workMs));
    return input;
  },
);
const handle = await serve(svc, { port: 0, logger: false, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
