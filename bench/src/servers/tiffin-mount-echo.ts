/**
 * Child process for the mount bench: quiet `serve()` of the JSON echo API, with a `@koa/router` mounted in front
 * (`BENCH_MOUNT=router`) or nothing mounted; `BENCH_CORE` names another build of `@tiffin/core` to serve with (a
 * path to its dist/index.js, e.g. the branch point's, for a before/after in one run). Prints its URL.
 */
import Router from '@koa/router';

const core = (await import(process.env.BENCH_CORE ?? '@tiffin/core')) as typeof import('@tiffin/core');
const { JSON: JSONDescriptor, Service, serve } = core;

const svc = new Service('bench_echo');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
  return input;
});
if (process.env.BENCH_MOUNT === 'router') {
  // A few routes of the kinds services add beside their APIs; API calls go through the router to the APIs.
  const router = new Router();
  router.get('/users/:id', (ctx) => {
    ctx.body = { id: ctx.params.id };
  });
  router.post('/hooks/:source', (ctx) => {
    ctx.status = 202;
  });
  router.get('/status', (ctx) => {
    ctx.body = 'ok';
  });
  svc.mount(router.routes());
  svc.mount(router.allowedMethods());
}
const handle = await serve(svc, { port: 0, logger: false, maxConcurrency: 1_000_000, handleSignals: true });
process.stdout.write(`${handle.url}\n`);
