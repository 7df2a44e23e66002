import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApp,
  JSON as JSONDescriptor,
  MemoryLogger,
  type ServerHandle,
  Service,
  serve,
  Unauthorized,
} from '../../src/index.js';
import type { HookCall } from '../../src/service/request-hooks.js';

/** A service whose hooks record what they saw, and an API that fails on demand. */
function hookedService(seen: string[]): Service {
  const svc = new Service('hooked');
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
    if ((input as { fail?: boolean }).fail) throw new Error('internal detail /srv/secret.ts');
    return input;
  });
  svc.onRequest((call: HookCall) => {
    seen.push(`request ${call.method} ${call.path} ${call.status} id=${call.requestId !== ''}`);
    if (call.get('x-deny') === 'yes') throw new Unauthorized('Denied by a hook');
    call.set('x-seen-by', 'onRequest');
  });
  svc.onRequest(async (call) => {
    // Async hooks are awaited in order.
    await new Promise((resolve) => setTimeout(resolve, 1));
    seen.push(`second ${call.path}`);
  });
  svc.onError((call, error) => {
    seen.push(`error ${call.path} ${error instanceof Error ? error.constructor.name : typeof error}`);
  });
  svc.onResponse((call) => {
    seen.push(`response ${call.path} ${call.status} ${call.responseHeader('content-type')}`);
    call.set('x-status-seen', String(call.status));
  });
  return svc;
}

describe('an onRequest hook that never settles', () => {
  it("is answered 504 at the server's deadline, and the next request is served", async () => {
    const svc = new Service('stuck');
    svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
      return input;
    });
    svc.onRequest((call) => (call.get('x-hang') === 'yes' ? new Promise<void>(() => {}) : undefined));
    const stuck = await serve(svc, { port: 0, logger: false, timeout: 0.3 });
    try {
      const send = (hang: string) =>
        fetch(`${stuck.url}/echo`, { method: 'POST', body: '{"a":1}', headers: { 'x-hang': hang } });
      const hung = await send('yes');
      expect([hung.status, ((await hung.json()) as { code: string }).code]).toEqual([
        504,
        'DEADLINE_EXCEEDED',
      ]);
      const next = await send('no');
      expect([next.status, await next.json()]).toEqual([200, { a: 1 }]);
    } finally {
      await stuck.close();
    }
  });
});

describe('onRequest, onResponse and onError hooks', () => {
  const seen: string[] = [];
  const logger = new MemoryLogger();
  let handle: ServerHandle;

  beforeAll(async () => {
    handle = await serve(hookedService(seen), { port: 0, logger });
  });
  afterAll(() => handle.close());

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${handle.url}${path}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });

  it('run around an answered call, in order, and may set headers', async () => {
    seen.length = 0;
    const res = await post('/echo', '{"a":1}');
    expect(await res.json()).toEqual({ a: 1 });
    expect(res.headers.get('x-seen-by')).toBe('onRequest');
    expect(res.headers.get('x-status-seen')).toBe('200');
    expect(seen).toEqual([
      'request POST /echo 404 id=true',
      'second /echo',
      'response /echo 200 application/json',
    ]);
  });

  it('an error thrown by onRequest is the answer, and the route never runs', async () => {
    seen.length = 0;
    const res = await post('/echo', '{"a":1}', { 'x-deny': 'yes' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'Denied by a hook' });
    expect(seen).toEqual([
      'request POST /echo 404 id=true',
      'error /echo Unauthorized',
      'response /echo 401 application/json',
    ]);
  });

  it('onError hears a failing API call; the client gets the one error body without internals', async () => {
    seen.length = 0;
    const res = await post('/echo', '{"fail":true}');
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('/srv/secret.ts');
    expect(seen).toContain('error /echo Error');
    expect(seen.at(-1)).toBe('response /echo 500 application/json');
  });

  it('run for every route, a malformed body and an unknown path included', async () => {
    seen.length = 0;
    const bad = await post('/echo', '{"a":');
    expect(bad.status).toBe(400);
    expect(seen).toContain('error /echo BadInput');
    seen.length = 0;
    const missing = await fetch(`${handle.url}/nope`);
    expect(missing.status).toBe(404);
    expect(seen[0]).toBe('request GET /nope 404 id=true');
    expect(seen.at(-1)).toBe('response /nope 404 application/json');
  });
});

describe('a failing onResponse or onError hook', () => {
  it('is logged, and the answer goes out as it was', async () => {
    const svc = new Service('failing_hooks');
    svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
      if (input === 'boom') throw new Unauthorized('no');
      return input;
    });
    svc.onError(() => {
      throw new Error('onError broke');
    });
    svc.onResponse(() => {
      throw new Error('onResponse broke');
    });
    const logger = new MemoryLogger();
    const handle = await serve(svc, { port: 0, logger });
    try {
      const ok = await fetch(`${handle.url}/echo`, {
        method: 'POST',
        body: '[1]',
        headers: { 'content-type': 'application/json' },
      });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe('[1]');
      const denied = await fetch(`${handle.url}/echo`, {
        method: 'POST',
        body: '"boom"',
        headers: { 'content-type': 'application/json' },
      });
      expect(denied.status).toBe(401);
      expect(await denied.text()).not.toContain('broke');
      const failures = logger.records.filter((r) => r.msg.endsWith('hook failed')).map((r) => r.msg);
      expect(failures).toEqual(['onResponse hook failed', 'onError hook failed', 'onResponse hook failed']);
    } finally {
      await handle.close();
    }
  });
});

describe('hooks with middleware added to the Koa app', () => {
  it('run inside the app (app.callback()), where middleware headers set after next() are kept', async () => {
    const seen: string[] = [];
    const tiffin = createApp(hookedService(seen), { logger: false });
    tiffin.app.middleware.unshift(async (ctx, next) => {
      seen.push('koa before');
      await next();
      ctx.set('x-koa', 'after');
    });
    await tiffin.lifecycle.startup();
    const server = createServer(tiffin.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const res = await fetch(`${url}/echo`, {
        method: 'POST',
        body: '{"b":2}',
        headers: { 'content-type': 'application/json' },
      });
      expect(await res.json()).toEqual({ b: 2 });
      expect(res.headers.get('x-koa')).toBe('after');
      expect(res.headers.get('x-seen-by')).toBe('onRequest');
      expect(seen).toEqual([
        'koa before',
        'request POST /echo 404 id=true',
        'second /echo',
        'response /echo 200 application/json',
      ]);
      // The listener `serve()` uses is the same path once middleware was added.
      expect(tiffin.requestListener()).not.toBe(tiffin.handle);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
