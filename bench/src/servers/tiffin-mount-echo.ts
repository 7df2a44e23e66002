/**
 * Child process for the mount bench: quiet `serve()` of the JSON echo API, with a `@koa/router` mounted in front
 * (`BENCH_MOUNT=router`) or nothing mounted; `BENCH_CORE` names another build of `@tiffin/core` to serve with (a
 * path to its dist/index.js, e.g. the branch point's, for a before/after in one run). Prints its URL.
 */
import { mountBenchRouter } from './bench-router.js';

const core = (await import(process.env.BENCH_CORE ?? '@tiffin/core')) as typeof import('@tiffin/core');
const { JSON: JSONDescriptor, Service, serve } = core;

const svc = new Service('bench_echo');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
  return input;
});
if (process.env.BENCH_MOUNT === 'router') mountBenchRouter(svc);
const handle = await serve(svc, { port: 0, logger: false, maxConcurrency: 1_000_000, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
