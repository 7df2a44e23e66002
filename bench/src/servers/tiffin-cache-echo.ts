/**
 * Child process for the response cache bench: quiet `serve()` of the JSON echo API, with `cache: true`
 * (`BENCH_CACHE=1`, every call after the first a hit) or without, and with `BENCH_WORK_MS` milliseconds of CPU
 * work in the function (a model's stand-in) or none. Prints its URL.
 */
import { JSON as JSONDescriptor, Service, serve } from '@tiffin/core';

const workMs = Number(process.env.BENCH_WORK_MS ?? 0);
const svc = new Service('bench_cache');
svc.api(
  { input: new JSONDescriptor(), output: new JSONDescriptor(), cache: process.env.BENCH_CACHE === '1' },
  function echo(input) {
    const until = performance.now() + workMs;
    while (performance.now() < until);
    return input;
  },
);
const handle = await serve(svc, { port: 0, logger: false, maxConcurrency: 1_000_000, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
