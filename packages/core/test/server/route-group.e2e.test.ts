import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadInput, type ServerHandle, Service } from '../../src/index.js';
import { start } from './helpers.js';

/**
 * Route groups (docs/server.md, route groups): the paths under a prefix answered under the group's own rules: its
 * error shape (a mapper over the catalog's answer), its auth mode (bearer, Basic, public), its body bound and
 * deadline, with the signal and body reader in `ctx.state`; a request outside the prefix never meets them.
 */
const TOKEN = 'group-token';
const USERS = ['alice:wonder land', 'bob:pa:ss', 'zoë:pässwörd'];

/** A shape of its own: `{ oops: { status, code, message } }`, and 422 for every 400 (as A1111 answers). */
const shape = (answer: { status: number; body: { code: string; error: string } }) => ({
  status: answer.status === 400 ? 422 : answer.status,
  body: { oops: { status: answer.status, code: answer.body.code, message: answer.body.error } },
});

let handle: ServerHandle;
let aborted = false;

beforeAll(async () => {
  const svc = new Service('route_groups');
  svc.group({
    prefix: '/shaped',
    errors: shape,
    maxBodySize: 64,
    routes: {
      '/shaped/echo': {
        POST: async (ctx) => ({ bytes: (await ctx.state.body()).length }),
        GET: () => ({ ok: true }),
      },
      '/shaped/refuse': {
        GET: () => Promise.reject(new BadInput('no such thing', { detail: { param: 'x' } })),
      },
      '/shaped/crash': {
        GET: () => {
          throw new Error('secret /internal/path');
        },
      },
      '/shaped/files/*': { GET: (ctx) => ({ file: ctx.path.slice('/shaped/files/'.length) }) },
    },
  });
  svc.group({
    prefix: '/slow',
    errors: shape,
    timeout: 0.05,
    routes: {
      '/slow/wait': {
        GET: (ctx) =>
          new Promise((resolve) => {
            ctx.state.signal.addEventListener('abort', () => {
              aborted = true;
              resolve({ late: true });
            });
          }),
      },
    },
  });
  svc.group({
    prefix: '/basic',
    auth: { basic: USERS },
    errors: shape,
    routes: { '/basic/me': { GET: () => 'in' } },
  });
  svc.group({ prefix: '/open', auth: 'public', routes: { '/open/hello': { GET: () => 'hi' } } });
  svc.group({ prefix: '/mapper-fails', errors: () => ({ status: 7, body: null }), routes: {} });
  // A user's Koa middleware as a group: what it passes on under its prefix is still answered in its shape.
  svc.mount(
    async (ctx, next) => {
      if (ctx.path === '/koa/mine') ctx.body = { mine: true };
      else await next();
    },
    { prefix: '/koa', errors: shape },
  );
  handle = await start(svc, { apiToken: TOKEN });
});

afterAll(async () => {
  await handle?.close();
});

const bearer = { authorization: `Bearer ${TOKEN}` };
const basic = (pair: string) => ({ authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` });

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${handle.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** One request over a raw connection (headers as bytes, non-ASCII included); resolves with the status line's code. */
function rawStatus(path: string, authorization: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(handle.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(text.slice(9, 12))));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: `);
    socket.end(Buffer.concat([authorization, Buffer.from('\r\n\r\n')]));
  });
}

describe('a route group’s error mapper', () => {
  it("answers its handlers' errors, its 404 and its 405 in its shape, with the catalog's code", async () => {
    const refused = await call('/shaped/refuse', { headers: bearer });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({ oops: { status: 400, code: 'BAD_INPUT', message: 'no such thing' } });
    const unknown = await call('/shaped/nothing-here', { headers: bearer });
    expect(unknown.status).toBe(404);
    expect(unknown.json().oops.code).toBe('NOT_FOUND');
    const method = await call('/shaped/refuse', { method: 'DELETE', headers: bearer });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('GET, HEAD');
    expect(method.json().oops.code).toBe('METHOD_NOT_ALLOWED');
    expect((await call('/shaped/files/a/b.txt', { headers: bearer })).json()).toEqual({ file: 'a/b.txt' });
  });

  it('answers a failure as a 500 in its shape with no internal detail', async () => {
    const crashed = await call('/shaped/crash', { headers: bearer });
    expect(crashed.status).toBe(500);
    expect(crashed.json().oops.code).toBe('INTERNAL_ERROR');
    expect(crashed.text).not.toContain('/internal/path');
  });

  it("leaves the paths outside the group in the catalog's shape; a Koa group's own paths are its", async () => {
    const outside = await call('/shapedless', { headers: bearer });
    expect(outside.status).toBe(404);
    expect(outside.json()).toMatchObject({ type: 'NotFound', code: 'NOT_FOUND' });
    expect((await call('/koa/mine', { headers: bearer })).json()).toEqual({ mine: true });
    const passed = await call('/koa/other', { headers: bearer });
    expect(passed.status).toBe(404);
    expect(passed.json().oops.code).toBe('NOT_FOUND');
    // A mapper that fails (here: a status that is no error status) leaves the catalog's answer.
    const failing = await call('/mapper-fails/x', { headers: bearer });
    expect(failing.status).toBe(404);
    expect(failing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('bounds its bodies: a declared or a sent size over its maxBodySize is its 413', async () => {
    expect(
      (await call('/shaped/echo', { method: 'POST', headers: bearer, body: 'x'.repeat(64) })).json(),
    ).toEqual({
      bytes: 64,
    });
    const declared = await call('/shaped/echo', { method: 'POST', headers: bearer, body: 'x'.repeat(65) });
    expect(declared.status).toBe(413);
    expect(declared.json().oops.code).toBe('PAYLOAD_TOO_LARGE');
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new Uint8Array(40));
        c.close();
      },
    });
    const streamed = await call('/shaped/echo', {
      method: 'POST',
      headers: bearer,
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(streamed.json().oops.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('gives its handlers its deadline: the 504 in its shape, the signal fired', async () => {
    const late = await call('/slow/wait', { headers: bearer });
    expect(late.status).toBe(504);
    expect(late.json().oops.code).toBe('DEADLINE_EXCEEDED');
    expect(aborted).toBe(true);
  });
});

describe('a route group’s auth mode', () => {
  it('bearer (the default): the service token, its 401 in the group’s shape', async () => {
    const denied = await call('/shaped/echo');
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(denied.json().oops.code).toBe('UNAUTHORIZED');
    expect((await call('/shaped/echo', { headers: bearer })).status).toBe(200);
    expect((await call('/shaped/echo', { headers: basic(USERS[0] as string) })).status).toBe(401);
  });

  it('public: anyone', async () => {
    expect((await call('/open/hello')).text).toBe('hi');
  });

  it('basic: any listed user:pass (UTF-8, colons in the password), or the bearer token', async () => {
    for (const pair of USERS)
      expect((await call('/basic/me', { headers: basic(pair) })).status, pair).toBe(200);
    expect((await call('/basic/me', { headers: bearer })).status).toBe(200);
    expect(
      (await call('/basic/me', { headers: { authorization: 'basic YWxpY2U6d29uZGVyIGxhbmQ=' } })).status,
    ).toBe(200);
    for (const headers of [{}, basic('alice:wrong'), basic('alice:wonder land '), basic('carol:x')]) {
      const denied = await call('/basic/me', { headers });
      expect(denied.status).toBe(401);
      expect(denied.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      expect(denied.json().oops.code).toBe('UNAUTHORIZED');
    }
  });

  it('basic: a hostile Authorization header is a 401, never a 5xx', async () => {
    const hostile = [
      'Basic',
      'Basic ',
      'Basic !!!!',
      'Basic YWxpY2U', // not padded
      'Basic ====',
      `Basic ${Buffer.from('alicewonder land').toString('base64')}`, // no colon
      `Basic ${Buffer.from(':wonder land').toString('base64')}`, // no user
      `Basic ${'QUFB'.repeat(3000)}`, // 12 KB
      `Basic ${Buffer.from(`alice:${'x'.repeat(5000)}`).toString('base64')}`,
      'Bearer',
      'Digest username="alice"',
    ];
    for (const value of hostile) {
      const denied = await call('/basic/me', { headers: { authorization: value } });
      expect(denied.status, value.slice(0, 40)).toBe(401);
    }
    // Non-ASCII bytes in the header itself (UTF-8 and Latin-1), as a raw client can send them.
    for (const bytes of [Buffer.from('Basic zoë:pässwörd', 'utf8'), Buffer.from('Basic \xe9\xe9', 'latin1')])
      expect(await rawStatus('/basic/me', bytes)).toBe(401);
  });
});

describe('declaring a route group', () => {
  const svc = new Service('declared');
  it('refuses a prefix that is no path, a route outside it and Basic credentials that are no user:pass', () => {
    expect(() => svc.group({ prefix: 'v1', routes: {} })).toThrow(/prefix/);
    expect(() => svc.group({ prefix: '/v1/', routes: {} })).toThrow(/prefix/);
    expect(() => svc.group({ prefix: '/v1', routes: { '/v2/x': { GET: () => 1 } } })).toThrow(/not under/);
    expect(() => svc.group({ prefix: '/v1', routes: { '/v10': { GET: () => 1 } } })).toThrow(/not under/);
    for (const basic of [[], ['nocolon'], [':nouser'], ['a:\n']])
      expect(() => svc.group({ prefix: '/v1', auth: { basic }, routes: {} })).toThrow(/user:pass|basic/);
    expect(() => svc.mount(async () => {}, { auth: 'public' })).toThrow(/prefix/);
    expect(() => svc.mount(async () => {}, { prefix: '/x', public: true, auth: { basic: ['a:b'] } })).toThrow(
      /disagree/,
    );
  });
});
