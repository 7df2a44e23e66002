import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadInput,
  InternalServerError,
  NotFound,
  Service,
  ServiceUnavailable,
  UnprocessableEntity,
} from '../../src/index.js';
import { newRequestId } from '../../src/server/request-id.js';
import { PlainText, rawGet, start } from './helpers.js';

const svc = new Service('server_e2e', { version: '1.2.3', doc: 'Server tests' });
const text = () => new PlainText();
svc.onStartup(({ state }) => {
  state.data = 'hello';
});
svc.api({ input: text(), output: text() }, function yo(input) {
  return `yo ${input}`;
});
svc.api({ input: text(), output: text() }, function use_context(input, ctx) {
  const error = ctx.request.query.get('error');
  if (error !== null) {
    ctx.response.status = 400;
    return error;
  }
  const key = ctx.request.query.get('state');
  if (key !== null) return String(ctx.state[key]);
  ctx.response.headers.set('x-custom', 'c');
  ctx.response.setCookie('k', 'v');
  return input;
});
svc.api({ input: text(), output: text() }, function odd_header(input, ctx) {
  // fetch's Headers accepts a control character that HTTP/1.1 (and Node) refuse on the wire.
  ctx.response.headers.set('x-odd', `a${String.fromCharCode(1)}b`);
  return input;
});
svc.api({ input: text(), output: text() }, function odd_status(input, ctx) {
  ctx.response.status = 1000;
  return input;
});
svc.api({ input: text(), output: text() }, function two_cookies(input, ctx) {
  ctx.response.setCookie('a', '1');
  ctx.response.setCookie('b', '2');
  ctx.response.headers.append('x-many', 'one');
  ctx.response.headers.append('x-many', 'two');
  return input;
});
svc.api({ input: text(), output: text() }, function stream(input) {
  return (async function* () {
    for (let i = 0; i < 10; i++) yield `${input} ${i}`;
  })();
});
svc.api({ input: text(), output: text() }, function raise_error(input) {
  switch (input) {
    case 'bad':
      throw new BadInput('b');
    case 'nf':
      throw new NotFound('n');
    case 'ue':
      throw new UnprocessableEntity('u');
    case 'ise':
      throw new InternalServerError('x');
    case 'su':
      throw new ServiceUnavailable('s');
    default:
      throw new Error('secret internal detail');
  }
});
svc.api({ input: text(), output: text(), name: 'custom_name', route: '/v1/custom/route' }, (input) => input);

let server: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  server = await start(svc);
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  fetch(server.url + path, { method: 'POST', body, headers: { 'content-type': 'text/plain', ...headers } });

describe('API pipeline', () => {
  it('serves an API over real HTTP (case 54)', async () => {
    const res = await post('/yo', 'Bob', { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('yo Bob');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('request ids are 64 random bits, unique across more requests than one random pool holds', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 600; i++) ids.add(newRequestId());
    expect(ids.size).toBe(600);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
    const res = await post('/yo', 'Bob', { 'x-request-id': 'from-proxy.1' });
    expect(res.headers.get('x-request-id')).toBe('from-proxy.1');
    const forged = await post('/yo', 'Bob', { 'x-request-id': 'bad id\twith tab' });
    expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('applies ctx status without content-length surprises (case 51)', async () => {
    const res = await post('/use_context?error=yes', '');
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('yes');
  });

  it('shares service state set by startup hooks (case 52)', async () => {
    const res = await post('/use_context?state=data', 'x');
    expect(await res.text()).toBe('hello');
  });

  it('writes ctx headers and cookies', async () => {
    const res = await post('/use_context', 'x');
    expect(res.headers.get('x-custom')).toBe('c');
    expect(res.headers.get('set-cookie')).toBe('k=v; Path=/; SameSite=lax');
  });

  it('answers a header value HTTP cannot carry with the one 500 body, and keeps serving', async () => {
    const res = await post('/odd_header', 'x');
    expect(res.status).toBe(500);
    expect(res.headers.get('x-odd')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = (await res.json()) as { code: string; error: string };
    expect(body.code).toBe('INTERNAL_ERROR');
    expect(body.error).not.toContain('x-odd');
    expect((await post('/yo', 'again')).status).toBe(200);
  });

  it('answers a status HTTP cannot carry with the one 500 body instead of leaving the client waiting', async () => {
    const res = await post('/odd_status', 'x');
    expect(res.status).toBe(500);
    expect(((await res.json()) as { code: string }).code).toBe('INTERNAL_ERROR');
    expect(server.logs.records.some((r) => r.msg === 'response failed')).toBe(true);
    expect((await post('/yo', 'again')).status).toBe(200);
  });

  it('sends each cookie on a line of its own, and repeated headers joined', async () => {
    const res = await post('/two_cookies', 'x');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/; SameSite=lax', 'b=2; Path=/; SameSite=lax']);
    expect(res.headers.get('x-many')).toBe('one, two');
    expect(await res.text()).toBe('x');
  });

  it('streams an async iterable chunked (case 53)', async () => {
    const res = await post('/stream', 'yo');
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    expect(await res.text()).toBe('yo 0yo 1yo 2yo 3yo 4yo 5yo 6yo 7yo 8yo 9');
  });

  it('maps TiffinErrors to their status with the docs/spec/io-descriptors.md D4 body (case 56, 57)', async () => {
    const cases: Array<[string, number, string, string, string]> = [
      ['bad', 400, 'b', 'BadInput', 'BAD_INPUT'],
      ['nf', 404, 'n', 'NotFound', 'NOT_FOUND'],
      ['ue', 422, 'u', 'UnprocessableEntity', 'UNPROCESSABLE_ENTITY'],
      ['ise', 500, 'x', 'InternalServerError', 'INTERNAL_ERROR'],
      ['su', 503, 's', 'ServiceUnavailable', 'SERVICE_UNAVAILABLE'],
    ];
    for (const [input, status, error, type, code] of cases) {
      const res = await post('/raise_error', input);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(await res.json()).toEqual({ error, type, code });
    }
  });

  it('hides unexpected errors: 500 with the request id, the stack only in the log (case 57 val)', async () => {
    const res = await post('/raise_error', 'val');
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id')!;
    const body = (await res.json()) as { error: string; type: string };
    expect(body.type).toBe('InternalServerError');
    expect(body.error).toContain(requestId);
    expect(JSON.stringify(body)).not.toContain('secret');
    const logged = server.logs.records.find((r) => r.msg === 'unhandled error' && r.requestId === requestId);
    expect(logged?.error).toBe('secret internal detail');
    expect(String(logged?.stack)).toContain('raise_error');
  });

  it('answers 400 (not 5xx) for invalid UTF-8 in a text body', async () => {
    const res = await post('/yo', new Uint8Array([0xe9]));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { type: string }).type).toBe('BadInput');
  });

  it('reuses a well-formed incoming x-request-id and replaces a malformed one', async () => {
    const good = await post('/yo', 'a', { 'x-request-id': 'proxy-id-42' });
    expect(good.headers.get('x-request-id')).toBe('proxy-id-42');
    const bad = await post('/yo', 'a', { 'x-request-id': 'a b\tc' });
    expect(bad.headers.get('x-request-id')).not.toBe('a b\tc');
  });

  it('writes one JSON access-log record per request with its id', async () => {
    const res = await post('/yo', 'log me');
    const id = res.headers.get('x-request-id');
    const rec = server.logs.records.find((r) => r.msg === 'request' && r.requestId === id);
    expect(rec).toMatchObject({ level: 'info', method: 'POST', path: '/yo', status: 200 });
    // Milliseconds to the microsecond.
    expect(typeof rec?.ms).toBe('number');
    expect(String(rec?.ms)).toMatch(/^\d+(\.\d{1,3})?$/);
  });
});

describe('routing (docs/spec/io-descriptors.md §10.1)', () => {
  it('serves a custom route and not the API name (case 58)', async () => {
    const ok = await post('/v1/custom/route', 'r');
    expect(await ok.text()).toBe('r');
    const nf = await post('/custom_name', 'r');
    expect(nf.status).toBe(404);
    expect(((await nf.json()) as { type: string }).type).toBe('NotFound');
  });

  it('answers 405 with allow: POST for a GET on an API (case 13)', async () => {
    for (const method of ['GET', 'PUT', 'OPTIONS', 'DELETE']) {
      const res = await fetch(`${server.url}/yo`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(((await res.json()) as { type: string }).type).toBe('MethodNotAllowed');
    }
  });

  it('answers 405 with allow: HEAD, GET for a POST to a health path (case 60)', async () => {
    const res = await fetch(`${server.url}/livez`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('HEAD, GET');
  });

  it('answers 404 JSON for an unknown path (case 61)', async () => {
    const res = await fetch(`${server.url}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toMatchObject({ type: 'NotFound' });
  });

  it('redirects a trailing slash with a relative 307, whatever the Host header says', async () => {
    // On main: `location: http://evil.example/yo` (the redirect was built from the Host header).
    const hostile = await rawGet(server.port, '/yo/', 'evil.example');
    expect(hostile).toMatch(/^HTTP\/1\.1 307/);
    expect(hostile).toMatch(/\r\nlocation: \/yo\r\n/i);
    expect(hostile).not.toMatch(/evil\.example/);
  });

  it('redirects a trailing slash with 307 to the path without it', async () => {
    const res = await fetch(`${server.url}/yo/?a=1`, { method: 'POST', body: 'x', redirect: 'manual' });
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe('/yo?a=1');
    const followed = await post('/yo/', 'z');
    expect(await followed.text()).toBe('yo z');
  });
});

describe('health, docs and the API page', () => {
  it('answers the health paths with 200 text \\n (case 59)', async () => {
    for (const path of ['/livez', '/healthz', '/readyz']) {
      const res = await fetch(server.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('content-length')).toBe('1');
      expect(await res.text()).toBe('\n');
    }
    const head = await fetch(`${server.url}/livez`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('publishes an OpenAPI 3 document with our names and docs/spec/io-descriptors.md D4 error schemas (case 62)', async () => {
    const res = await fetch(`${server.url}/docs.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = (await res.json()) as {
      openapi: string;
      servers: unknown;
      info: { title: string; version: string };
      paths: Record<string, { post?: Record<string, unknown>; get?: unknown }>;
      components: { schemas: Record<string, { required: string[]; properties: Record<string, unknown> }> };
    };
    expect(doc.openapi).toBe('3.0.2');
    expect(doc.servers).toEqual([{ url: '.' }]);
    expect(doc.info).toMatchObject({ title: 'server_e2e', version: '1.2.3' });
    expect(Object.keys(doc.paths).slice(0, 4)).toEqual(['/healthz', '/livez', '/readyz', '/metrics']);
    const yo = doc.paths['/yo']!.post!;
    expect(yo.operationId).toBe('server_e2e__yo');
    expect(yo['x-tiffin-name']).toBe('yo');
    expect(yo.summary).toBe('InferenceAPI(PlainText → PlainText)');
    expect((yo.requestBody as Record<string, unknown>)['x-tiffin-io-descriptor']).toEqual({
      id: 'test.PlainText',
      args: {},
    });
    expect(doc.paths['/v1/custom/route']?.post?.operationId).toBe('server_e2e__custom_name');
    const responses = yo.responses as Record<string, { content?: Record<string, { schema: unknown }> }>;
    expect(responses['400']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/InvalidArgument',
    });
    for (const name of ['InvalidArgument', 'NotFound', 'InternalServerError']) {
      const schema = doc.components.schemas[name]!;
      expect(schema.required).toEqual(['error', 'type', 'code']);
      expect(Object.keys(schema.properties)).toEqual(['error', 'type', 'code', 'detail']);
    }
    expect(JSON.stringify(doc).toLowerCase()).not.toContain('bento');
  });

  it('serves the API page and its local assets with our initializer (case 63)', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(html).toContain('./static_content/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    const init = await fetch(`${server.url}/static_content/swagger-initializer.js`);
    const initText = await init.text();
    expect(initText).toContain("url: './docs.json'");
    expect(initText).toContain('validatorUrl: null');
    const bundle = await fetch(`${server.url}/static_content/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toContain('javascript');
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const missing = await fetch(`${server.url}/static_content/../package.json`);
    expect(missing.status).toBe(404);
  });
});
