import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BadInput,
  inferenceClientConstructor,
  isTiffinError,
  type RequestMessage,
  type ResponseMessage,
  Service,
  serveGrpc,
  Text,
} from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

/**
 * A service with an API and a `@koa/router` mounted in front of it: a GET with a path parameter, a POST whose
 * body koa-body parses (JSON, urlencoded, multipart), a route that throws, a slow route, a redirect.
 */
function mountedService(options: { public?: boolean; timeout?: number } = {}) {
  const svc = new Service('mounted');
  svc.api({ input: new Text(), output: new Text() }, function echo(text) {
    return `echo:${text}`;
  });
  const router = new Router();
  router.get('/users/:id', (ctx) => {
    ctx.body = { id: ctx.params.id, requestId: ctx.state.requestId };
  });
  router.post('/forms', koaBody({ multipart: true }), (ctx) => {
    const files = ctx.request.files ?? {};
    const upload = files.upload;
    const file = Array.isArray(upload) ? upload[0] : upload;
    ctx.body = {
      fields: ctx.request.body,
      file: file ? { name: file.originalFilename, size: file.size } : null,
    };
  });
  router.get('/boom', () => {
    throw new Error('secret internal detail /srv/app/db.ts');
  });
  router.get('/missing', (ctx) => ctx.throw(404, 'no such thing'));
  router.get('/slow', async (ctx) => {
    await sleep(Number(ctx.query.ms ?? 300));
    ctx.body = 'slow done';
  });
  router.get('/stream', (ctx) => {
    ctx.type = 'text/plain';
    ctx.body = Readable.from(['a', 'b', 'c']);
  });
  router.get('/nothing', (ctx) => {
    ctx.body = null;
  });
  router.get('/old', (ctx) => ctx.redirect('/users/1'));
  svc.mount(router.routes(), options);
  svc.mount(router.allowedMethods(), options);
  return svc;
}

let handle: Awaited<ReturnType<typeof start>> | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(handle!.url + path, { headers });

async function metricsText(): Promise<string> {
  return (await get('/metrics')).text();
}

describe('svc.mount: routes beside the APIs', () => {
  it('answers a router GET with a path parameter and passes other requests on to the APIs', async () => {
    handle = await start(mountedService());
    const user = await get('/users/42');
    expect(user.status).toBe(200);
    expect(user.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await user.json()) as { id: string; requestId: string };
    expect(body.id).toBe('42');
    // The request id the route sees is the one the response and the access log carry.
    expect(user.headers.get('x-request-id')).toBe(body.requestId);
    expect(user.headers.get('x-content-type-options')).toBe('nosniff');
    const line = handle.logs.records.find((r) => r.msg === 'request' && r.path === '/users/42');
    expect(line).toMatchObject({ requestId: body.requestId, method: 'GET', status: 200 });

    const api = await fetch(`${handle.url}/echo`, { method: 'POST', body: 'hi' });
    expect(api.status).toBe(200);
    expect(await api.text()).toBe('echo:hi');
    expect((await get('/livez')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
    expect((await get('/')).headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('parses JSON, urlencoded and multipart bodies with koa-body', async () => {
    handle = await start(mountedService());
    const json = await fetch(`${handle.url}/forms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Zoë', tags: ['a'] }),
    });
    expect(await json.json()).toEqual({ fields: { name: 'Zoë', tags: ['a'] }, file: null });
    const form = await fetch(`${handle.url}/forms`, {
      method: 'POST',
      body: new URLSearchParams({ name: 'tea', qty: '2' }),
    });
    expect(await form.json()).toEqual({ fields: { name: 'tea', qty: '2' }, file: null });
    const data = new FormData();
    data.set('note', 'hello');
    data.set('upload', new Blob([new Uint8Array(1000)]), 'model.bin');
    const multipart = await fetch(`${handle.url}/forms`, { method: 'POST', body: data });
    expect(await multipart.json()).toEqual({
      fields: { note: 'hello' },
      file: { name: 'model.bin', size: 1000 },
    });
  });

  it('sends the answers Koa would: a stream, an empty 204, a redirect, 405 from allowedMethods, 404 otherwise', async () => {
    handle = await start(mountedService());
    const stream = await get('/stream');
    expect([stream.status, await stream.text()]).toEqual([200, 'abc']);
    const nothing = await get('/nothing');
    expect([nothing.status, await nothing.text()]).toEqual([204, '']);
    const old = await fetch(`${handle.url}/old`, { redirect: 'manual' });
    expect([old.status, old.headers.get('location')]).toEqual([302, '/users/1']);
    const head = await fetch(`${handle.url}/users/7`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);

    const wrongMethod = await fetch(`${handle.url}/users/7`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('HEAD, GET');
    const unknown = await get('/nowhere');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ type: 'NotFound', code: 'NOT_FOUND' });
    // A built-in path keeps its own answers: a trailing slash redirects, another method is 405.
    expect((await fetch(`${handle.url}/livez/`, { redirect: 'manual' })).status).toBe(307);
    expect((await fetch(`${handle.url}/echo`)).status).toBe(405);
  });

  it('labels metrics with the route pattern, never the raw path', async () => {
    handle = await start(mountedService());
    for (const id of ['1', '2', 'three']) expect((await get(`/users/${id}`)).status).toBe(200);
    await get('/boom');
    const text = await metricsText();
    expect(text).toMatch(
      /tiffin_api_server_request_total\{endpoint="\/users\/:id",[^}]*http_response_code="200"\} 3/,
    );
    expect(text).toMatch(
      /tiffin_api_server_request_total\{endpoint="\/boom",[^}]*http_response_code="500"\} 1/,
    );
    expect(text).not.toContain('endpoint="/users/1"');
    expect(text).not.toContain('endpoint="/users/three"');
  });

  it('labels an answer from middleware without a router "mounted"', async () => {
    const svc = new Service('plain');
    svc.mount(async (ctx, next) => {
      if (ctx.path.startsWith('/files/')) ctx.body = `file ${ctx.path}`;
      else await next();
    });
    handle = await start(svc);
    for (const n of [1, 2]) expect(await (await get(`/files/${n}`)).text()).toBe(`file /files/${n}`);
    const text = await metricsText();
    expect(text).toMatch(/tiffin_api_server_request_total\{endpoint="mounted",[^}]*\} 2/);
    expect(text).not.toContain('endpoint="/files/1"');
  });

  it('answers a throwing route with the one JSON error body, logs it, and keeps serving', async () => {
    handle = await start(mountedService());
    const boom = await get('/boom');
    expect(boom.status).toBe(500);
    const text = await boom.text();
    expect(JSON.parse(text)).toMatchObject({ type: 'InternalServerError', code: 'INTERNAL_ERROR' });
    expect(text).not.toContain('secret');
    expect(text).not.toContain('/srv/app');
    const logged = handle.logs.records.find((r) => r.msg === 'unhandled error');
    expect(logged).toMatchObject({
      requestId: boom.headers.get('x-request-id'),
      error: expect.stringContaining('secret'),
    });
    expect(String(logged?.stack)).toContain('mount.e2e.test.ts');

    const missing = await get('/missing');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'no such thing', type: 'NotFound', code: 'NOT_FOUND' });
    expect((await get('/users/1')).status).toBe(200);
  });

  it('bounds bodies: a declared size over the limit, and a chunked body growing past it, get 413', async () => {
    handle = await start(mountedService(), { maxBodySize: 4096 });
    const declared = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // Declares 1 GiB and sends a few bytes: refused before anything reads it.
      const req = httpRequest(`${handle!.url}/forms`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(2 ** 30) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"a":');
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });

    for (const type of ['application/json', 'multipart/form-data; boundary=x']) {
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          // A JSON string or a multipart file, 64 KiB in all: sixteen times the limit.
          const open = type.startsWith('multipart')
            ? '--x\r\ncontent-disposition: form-data; name="upload"; filename="a.bin"\r\n\r\n'
            : '{"a":"';
          controller.enqueue(new TextEncoder().encode(open));
          for (let i = 0; i < 64; i++) controller.enqueue(new Uint8Array(1024).fill(97));
          controller.close();
        },
      });
      const res = await fetch(`${handle.url}/forms`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: chunks,
        duplex: 'half',
      } as RequestInit);
      expect(res.status, type).toBe(413);
      expect(await res.json()).toMatchObject({ type: 'PayloadTooLarge', code: 'PAYLOAD_TOO_LARGE' });
    }
    // A chunked body over the limit sent to an API through the mounts is a 413 too.
    const api = await fetch(`${handle.url}/echo`, {
      method: 'POST',
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 8; i++) controller.enqueue(new Uint8Array(1024).fill(97));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(api.status).toBe(413);
    expect((await get('/users/1')).status).toBe(200);
  });

  it('answers malformed input to mounted routes with a 4xx JSON body, never a 5xx', async () => {
    handle = await start(mountedService());
    const post = (type: string, body: string) =>
      fetch(`${handle!.url}/forms`, { method: 'POST', headers: { 'content-type': type }, body });
    for (const [type, body] of [
      ['application/json', '{"name": '],
      ['application/json', '[1, 2'],
      ['application/json', '\u0000\uffff'],
      ['multipart/form-data; boundary=x', '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\nno end'],
    ] as const) {
      const res = await post(type, body);
      expect(res.status, `${type} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${type} ${JSON.stringify(body)}`).toBeLessThan(500);
      const answer = (await res.json()) as { code: string; error: string };
      expect(answer.code).toMatch(/^[A-Z_]+$/);
      expect(answer.error).not.toMatch(/node_modules|at .*\(/);
    }
    // Path parameters: non-ASCII, and percent-encoding that is not UTF-8.
    expect((await (await get('/users/%E2%9C%93')).json()) as object).toMatchObject({ id: '✓' });
    const broken = await get('/users/%E0%A4%A');
    expect(broken.status).toBeLessThan(500);
    expect((await get('/users/1')).status).toBe(200);
  });

  it('times out a slow route and a slow body with 504', async () => {
    handle = await start(mountedService(), { timeout: 0.2 });
    const slow = await get('/slow?ms=1000');
    expect(slow.status).toBe(504);
    expect(await slow.json()).toMatchObject({ code: 'DEADLINE_EXCEEDED' });

    // A client that sends a form body a byte now and then: the deadline answers.
    const trickle = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${handle!.url}/forms`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '100' },
      });
      const timer = setInterval(() => req.write('a'), 50);
      req.on('response', (res) => {
        clearInterval(timer);
        res.resume();
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (err) => {
        clearInterval(timer);
        reject(err);
      });
    });
    expect(trickle).toBe(504);
    expect((await get('/users/1')).status).toBe(200);
  });

  it("gives mounted routes their mount's deadline, never the API's shorter one", async () => {
    const svc = mountedService({ timeout: 1.5 });
    svc.api({ input: new Text(), output: new Text() }, async function nap(text) {
      await sleep(Number(text));
      return 'woke';
    });
    handle = await start(svc, { timeout: 0.2 });
    // 0.5 s: past the server's 0.2 s, within the mount's 1.5 s.
    const slow = await get('/slow?ms=500');
    expect([slow.status, await slow.text()]).toEqual([200, 'slow done']);
    const slower = await get('/slow?ms=2500');
    expect([slower.status, ((await slower.json()) as { code: string }).code]).toEqual([
      504,
      'DEADLINE_EXCEEDED',
    ]);
    // An API without its own timeout keeps the server's.
    const api = await fetch(`${handle.url}/nap`, { method: 'POST', body: '500' });
    expect(api.status).toBe(504);
    expect(() => new Service('bad').mount(async () => {}, { timeout: 0 })).toThrow(
      /positive number of seconds/,
    );
  });

  it('holds mounted routes to the concurrency limit', async () => {
    handle = await start(mountedService(), { maxConcurrency: 1, retryAfter: 3 });
    const slow = get('/slow?ms=300');
    await sleep(100);
    const refused = await get('/users/1');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect((await slow).status).toBe(200);
    // Probes are never limited.
    expect((await get('/livez')).status).toBe(200);
  });

  it('drains a mounted request in flight at shutdown', async () => {
    handle = await start(mountedService());
    const slow = get('/slow?ms=300');
    await sleep(100);
    const closing = handle.close();
    const res = await slow;
    expect([res.status, await res.text()]).toEqual([200, 'slow done']);
    expect(res.headers.get('connection')).toBe('close');
    await closing;
    handle = undefined;
  });

  it('puts mounted routes behind the API token, unless mounted public', async () => {
    handle = await start(mountedService(), { apiToken: 'secret-token' });
    const denied = await get('/users/1');
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await get('/users/1', { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await get('/users/1', { authorization: 'Bearer secret-token' })).status).toBe(200);
    expect((await get('/livez')).status).toBe(200);
    await handle.close();

    const svc = mountedService({ public: true });
    const privateRouter = new Router();
    privateRouter.get('/admin', (ctx) => {
      ctx.body = 'admin';
    });
    svc.mount(privateRouter.routes());
    handle = await start(svc, { apiToken: 'secret-token' });
    expect((await get('/users/1')).status).toBe(200);
    // The private mount and the APIs still need the token.
    expect((await get('/admin')).status).toBe(401);
    expect(await (await get('/admin', { authorization: 'Bearer secret-token' })).text()).toBe('admin');
    expect((await fetch(`${handle.url}/echo`, { method: 'POST', body: 'x' })).status).toBe(401);
    expect((await get('/docs.json')).status).toBe(401);
    const api = await fetch(`${handle.url}/echo`, {
      method: 'POST',
      body: 'x',
      headers: { authorization: 'Bearer secret-token' },
    });
    expect(await api.text()).toBe('echo:x');
  });

  it('lists the routes a mounted router describes on the API page', async () => {
    handle = await start(mountedService({ public: true }));
    const doc = (await (await get('/docs.json')).json()) as {
      paths: Record<
        string,
        Record<string, { tags: string[]; parameters?: Array<{ name: string; in: string }> }>
      >;
      tags: Array<{ name: string }>;
    };
    expect(Object.keys(doc.paths['/users/{id}'] ?? {})).toEqual(['get']);
    expect(doc.paths['/users/{id}']?.get?.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    expect(Object.keys(doc.paths['/forms'] ?? {})).toEqual(['post']);
    expect(doc.paths['/forms']?.post?.tags).toEqual(['Mounted routes']);
    expect(doc.paths['/echo']?.post?.tags).toEqual(['Service APIs']);
    expect(doc.tags.map((t) => t.name)).toContain('Mounted routes');
  });

  it('lets middleware add headers to API answers, and runs mounts in order', async () => {
    const svc = new Service('order');
    svc.api({ input: new PlainText(), output: new PlainText() }, function echo(text) {
      return text;
    });
    const seen: string[] = [];
    svc.mount(async (ctx, next) => {
      seen.push('first');
      await next();
      ctx.set('x-served-by', 'mounted');
    });
    svc.mount(async (_ctx, next) => {
      seen.push('second');
      await next();
    });
    handle = await start(svc);
    const res = await fetch(`${handle.url}/echo`, { method: 'POST', body: 'hey' });
    expect([res.status, await res.text(), res.headers.get('x-served-by')]).toEqual([200, 'hey', 'mounted']);
    expect(seen).toEqual(['first', 'second']);
  });

  it('keeps Koa idioms: a 404 handler after next() leaves API answers alone, an error handler sees API errors', async () => {
    const svc = new Service('idioms');
    svc.api({ input: new Text(), output: new Text() }, function shout(text) {
      if (!text) throw new BadInput('say something');
      return text.toUpperCase();
    });
    const seen: Array<[number, string]> = [];
    svc.mount(async (_ctx, next) => {
      try {
        await next();
      } catch (err) {
        // The server's errors carry their status as `httpStatus` (isTiffinError tells them apart).
        seen.push([isTiffinError(err) ? err.httpStatus : 0, (err as Error).message]);
        throw err;
      }
    });
    svc.mount(async (ctx, next) => {
      await next();
      seen.push([ctx.status, ctx.path]);
      if (ctx.status === 404) {
        ctx.status = 404;
        ctx.body = { error: 'custom not found', type: 'NotFound', code: 'NOT_FOUND' };
      }
    });
    handle = await start(svc);
    const ok = await fetch(`${handle.url}/shout`, { method: 'POST', body: 'hi' });
    expect([ok.status, await ok.text()]).toEqual([200, 'HI']);
    const bad = await fetch(`${handle.url}/shout`, { method: 'POST', body: '' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'BAD_INPUT', error: 'say something' });
    const unknown = await get('/nowhere');
    expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([
      404,
      'custom not found',
    ]);
    expect(seen).toEqual([
      [200, '/shout'],
      [400, 'say something'],
      [404, '/nowhere'],
    ]);
  });

  it('runs mounts after middleware added to the Koa app, on the same Koa context', async () => {
    const svc = mountedService();
    const router = new Router<{ tenant?: string }>();
    router.get('/tenant', (ctx) => {
      ctx.body = String(ctx.state.tenant);
    });
    svc.mount(router.routes());
    handle = await start(svc);
    handle.app.app.middleware.unshift(async (ctx, next) => {
      (ctx.state as unknown as { tenant: string }).tenant = 'acme';
      await next();
    });
    // The listener is taken from the app after changing it, as docs/server.md says.
    const { createServer } = await import('node:http');
    const server = createServer(handle.app.requestListener());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      expect(await (await fetch(`${url}/tenant`)).text()).toBe('acme');
      expect((await (await fetch(`${url}/users/9`)).json()) as object).toMatchObject({ id: '9' });
      const api = await fetch(`${url}/echo`, { method: 'POST', body: 'k' });
      expect(await api.text()).toBe('echo:k');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('keeps working when the service is served over gRPC as well (HTTP only)', async () => {
    const svc = mountedService();
    handle = await start(svc);
    const rpc = await serveGrpc(svc, {
      port: 0,
      log: () => undefined,
      runStartupHooks: false,
      runtime: handle.app.runtime,
    });
    const Ctor = inferenceClientConstructor();
    const client = new Ctor(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
    };
    try {
      const answer = await new Promise<ResponseMessage>((resolve, reject) =>
        client.Call({ api_name: 'echo', text: { value: 'rpc' } }, (err, res) =>
          err ? reject(err) : resolve(res),
        ),
      );
      expect(answer.text?.value).toBe('echo:rpc');
      expect((await (await get('/users/5')).json()) as object).toMatchObject({ id: '5' });
    } finally {
      client.close();
      await rpc.close();
    }
  });

  it('refuses something other than a function', () => {
    expect(() => new Service('bad').mount('nope' as never)).toThrow(/Koa middleware/);
  });
});
