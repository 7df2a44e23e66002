/**
 * A service with routes of its own beside its API (docs/server.md "Your own routes"): a `@koa/router` with a
 * page per user, a sign-up form and an upload parsed by koa-body, a redirect, and a public webhook.
 */
import Router from '@koa/router';
import { Service, Text } from '@tiffin/core';
import { koaBody } from 'koa-body';

const svc = new Service('routes');

svc.api({ input: new Text(), output: new Text(), doc: 'Upper-cases the text.' }, function shout(text) {
  return text.toUpperCase();
});

const signups: string[] = [];

const site = new Router();
site.get('/hello/:name', (ctx) => {
  ctx.body = { hello: ctx.params.name };
});
// koa-body on the routes that read a body: JSON and urlencoded forms...
site.post('/signup', koaBody(), (ctx) => {
  const email = (ctx.request.body as { email?: unknown }).email;
  if (typeof email !== 'string' || !email.includes('@')) return ctx.throw(400, 'an email address is needed');
  signups.push(email);
  ctx.status = 201;
  ctx.body = { welcome: email, signups: signups.length };
});
// ...and multipart uploads (files go to the OS temp folder, bounded by the server's maxBodySize).
site.post('/upload', koaBody({ multipart: true }), (ctx) => {
  const files = Object.values(ctx.request.files ?? {}).flat();
  ctx.body = files.map((file) => ({ name: file.originalFilename, bytes: file.size }));
});
site.get('/docs', (ctx) => ctx.redirect('/'));
svc.mount(site.routes()).mount(site.allowedMethods());

// Open without the API token: a webhook that would check its sender's own signature.
const hooks = new Router();
hooks.post('/hooks/deploy', koaBody(), (ctx) => {
  ctx.status = 202;
  ctx.body = { queued: true };
});
svc.mount(hooks.routes(), { public: true });

export default svc;
