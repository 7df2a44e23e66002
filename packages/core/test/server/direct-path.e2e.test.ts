import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, JSON as JSONDescriptor, type ServerOptions, Service, Text } from '../../src/index.js';
import { PlainText, sleep } from './helpers.js';

/** A response as the wire has it: status, header names/values in order (volatile values blanked), body. */
interface RawResponse {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

const VOLATILE = new Set(['date', 'x-request-id', 'server-timing']);

function call(
  url: string,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      { method: init.method ?? 'POST', headers: init.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers: Array<[string, string]> = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i]!.toLowerCase();
            headers.push([name, VOLATILE.has(name) ? '<volatile>' : res.rawHeaders[i + 1]!]);
          }
          resolve({ status: res.statusCode!, headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

function service(): Service {
  const svc = new Service('parity');
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
    return input;
  });
  svc.api({ input: new PlainText(), output: new PlainText() }, function dressed(input, ctx) {
    ctx.response.status = 201;
    ctx.response.headers.set('x-one', '1');
    ctx.response.setCookie('a', '1');
    ctx.response.setCookie('b', '2');
    return input.toUpperCase();
  });
  svc.api({ input: new PlainText(), output: new PlainText() }, function nothing(_input, ctx) {
    ctx.response.status = 204;
    return '';
  });
  svc.api({ input: new Text(), output: new Text() }, async function* stream(input) {
    for (const word of input.split(' ')) yield `${word};`;
  });
  svc.api({ input: new PlainText(), output: new PlainText() }, async function scratch(input, ctx) {
    // The context is the request's: its id, its temp dir (removed once the request closed).
    const dir = await ctx.tempDir();
    await writeFile(join(dir, 'note.txt'), input);
    return `${ctx.requestId} ${dir}`;
  });
  svc.api({ input: new PlainText(), output: new PlainText() }, function broken(): string {
    throw new Error('secret internals');
  });
  svc.api({ input: new PlainText(), output: new PlainText(), timeout: 0.05 }, async function slow(input) {
    await sleep(300);
    return input;
  });
  return svc;
}

async function listen(
  listener: Parameters<typeof createServer>[1],
): Promise<{ server: Server; url: string }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const OPTIONS: ServerOptions = {
  logger: false,
  maxBodySize: 64,
  cors: {
    enabled: true,
    access_control_allow_origins: ['http://ok.example'],
    access_control_expose_headers: 'x-one',
  },
};

describe('API calls answered without Koa match the Koa path exactly', () => {
  let koa: { server: Server; url: string };
  let direct: { server: Server; url: string };

  beforeAll(async () => {
    const viaKoa = createApp(service(), OPTIONS);
    const viaListener = createApp(service(), OPTIONS);
    await viaKoa.lifecycle.startup();
    await viaListener.lifecycle.startup();
    koa = await listen(viaKoa.app.callback());
    direct = await listen(viaListener.requestListener());
  });

  afterAll(async () => {
    for (const s of [koa.server, direct.server]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  const cases: Array<[string, string, Parameters<typeof call>[2]]> = [
    ['JSON echo', '/echo', { body: '{"a":[1,2.5,"x"]}', headers: { 'content-type': 'application/json' } }],
    ['invalid JSON → 400', '/echo', { body: '{"a":', headers: { 'content-type': 'application/json' } }],
    ['status, headers and cookies from ctx', '/dressed', { body: 'hi' }],
    ['204 from ctx: no body', '/nothing', { body: 'x' }],
    ['streamed text', '/stream', { body: 'a b c', headers: { 'content-type': 'text/plain' } }],
    ['handler error → 500 without internals', '/broken', { body: 'x', headers: { 'x-request-id': 'req-1' } }],
    ['deadline → 504', '/slow', { body: 'x' }],
    [
      'body over the limit → 413',
      '/echo',
      { body: 'x'.repeat(100), headers: { 'content-type': 'application/json' } },
    ],
    ['allowed origin gets CORS headers', '/echo', { body: '1', headers: { origin: 'http://ok.example' } }],
    ['other origin: no allow-origin', '/echo', { body: '1', headers: { origin: 'http://no.example' } }],
    ['query string on an API path', '/echo?x=1', { body: '2' }],
    ['GET on an API path → 405 (Koa answers)', '/echo', { method: 'GET' }],
  ];

  for (const [name, path, init] of cases) {
    it(name, async () => {
      const viaKoa = await call(koa.url, path, init);
      const viaDirect = await call(direct.url, path, init);
      expect(viaDirect).toEqual(viaKoa);
      expect(viaDirect.headers.some(([n]) => n === 'x-request-id')).toBe(true);
    });
  }

  it("ctx.requestId is the request's id and ctx.tempDir() is removed once the request closed, on both paths", async () => {
    for (const url of [direct.url, koa.url]) {
      const res = await call(url, '/scratch', { body: 'kept', headers: { 'x-request-id': 'scratch-1' } });
      expect(res.status).toBe(200);
      const [requestId, dir] = res.body.split(' ');
      expect(requestId).toBe('scratch-1');
      // Removed after the answer went out (the removal is asynchronous): give it a moment.
      for (let i = 0; i < 100 && existsSync(dir!); i++) await sleep(20);
      expect(existsSync(dir!)).toBe(false);
    }
  });

  it('the failing handler is a plain 500 with the one error body', async () => {
    const res = await call(direct.url, '/broken', { body: 'x' });
    expect(res.status).toBe(500);
    expect(res.body).not.toContain('secret internals');
    expect(JSON.parse(res.body)).toMatchObject({ type: 'InternalServerError' });
  });
});

describe('requestListener', () => {
  it('sends every request through Koa once middleware was added to the app', async () => {
    const tiffin = createApp(service(), { logger: false });
    const seen: string[] = [];
    tiffin.app.middleware.unshift(async (ctx, next) => {
      seen.push(`${ctx.method} ${ctx.path}`);
      await next();
    });
    await tiffin.lifecycle.startup();
    const { server, url } = await listen(tiffin.requestListener());
    try {
      const res = await call(url, '/echo', { body: '[1]', headers: { 'content-type': 'application/json' } });
      expect(res.body).toBe('[1]');
      expect(seen).toEqual(['POST /echo']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
