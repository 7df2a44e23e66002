import Router from '@koa/router';
import type { Service } from '@tiffin/core';

/**
 * Mount a `@koa/router` with routes of the kinds services add beside their APIs (a page per id, a webhook, a
 * status), and its `allowedMethods()`: API calls to the service then pass through both.
 */
export function mountBenchRouter(svc: Service): void {
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
