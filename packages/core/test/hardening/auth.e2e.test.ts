import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type GrpcServerHandle,
  inferenceClientConstructor,
  JSON as JSONDescriptor,
  type RequestMessage,
  Service,
  serveGrpc,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import { API_TOKEN_ENV, bearerAuth } from '../../src/server/auth.js';
import { start } from '../server/helpers.js';

const TOKEN = 's3cret-token';
const svc = new Service('auth_svc');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(v) {
  return v;
});

let handle: Awaited<ReturnType<typeof start>> | undefined;
let rpc: GrpcServerHandle | undefined;
afterEach(async () => {
  await handle?.close();
  await rpc?.close();
  handle = undefined;
  rpc = undefined;
  delete process.env[API_TOKEN_ENV];
});

const get = (path: string, auth?: string) =>
  fetch(`${handle!.url}${path}`, { headers: auth ? { authorization: auth } : {} });
const call = (auth?: string) =>
  fetch(`${handle!.url}/echo`, {
    method: 'POST',
    body: '{"a":1}',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
  });

describe('bearer-token auth over HTTP', () => {
  it('refuses API calls, the page and docs.json without the token, with a 401 challenge', async () => {
    handle = await start(svc, { apiToken: TOKEN });
    for (const res of [await call(), await get('/'), await get('/docs.json')]) {
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="tiffin"');
      expect(await res.json()).toMatchObject({ type: 'Unauthorized', code: 'UNAUTHORIZED' });
    }
    for (const wrong of [
      `Bearer ${TOKEN}x`,
      'Bearer',
      `Basic ${TOKEN}`,
      TOKEN,
      `Bearer ${'x'.repeat(10_000)}`,
    ]) {
      const res = await call(wrong);
      expect(res.status, wrong.slice(0, 20)).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('serves with the right token (scheme case-insensitive)', async () => {
    handle = await start(svc, { apiToken: TOKEN });
    expect(await (await call(`Bearer ${TOKEN}`)).json()).toEqual({ a: 1 });
    expect((await call(`bearer ${TOKEN}`)).status).toBe(200);
    expect((await get('/docs.json', `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await get('/', `Bearer ${TOKEN}`)).status).toBe(200);
  });

  it('keeps the probes and /metrics open, and closes /metrics with metricsAuth', async () => {
    handle = await start(svc, { apiToken: TOKEN });
    for (const path of ['/livez', '/healthz', '/readyz', '/metrics'])
      expect((await get(path)).status).toBe(200);
    await handle.close();
    handle = await start(svc, { apiToken: TOKEN, metricsAuth: true });
    expect((await get('/metrics')).status).toBe(401);
    expect((await get('/metrics', `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await get('/readyz')).status).toBe(200);
  });

  it('reads TIFFIN_API_TOKEN; an explicit empty token turns auth off', async () => {
    process.env[API_TOKEN_ENV] = TOKEN;
    handle = await start(svc);
    expect((await call()).status).toBe(401);
    expect((await call(`Bearer ${TOKEN}`)).status).toBe(200);
    await handle.close();
    handle = await start(svc, { apiToken: '' });
    expect((await call()).status).toBe(200);
  });

  it('never logs the token', async () => {
    handle = await start(svc, { apiToken: TOKEN });
    await call(`Bearer ${TOKEN}`);
    await call('Bearer wrong');
    expect(JSON.stringify(handle.logs.records)).not.toContain(TOKEN);
  });
});

describe('bearer-token auth over gRPC', () => {
  it('answers UNAUTHENTICATED without the token and serves with it; health stays open', async () => {
    rpc = await serveGrpc(svc, { port: 0, reflection: false, apiToken: TOKEN, log: () => {} });
    const Client = inferenceClientConstructor();
    const client = new Client(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, md: grpc.Metadata, cb: (err: grpc.ServiceError | null) => void): void;
    };
    const callWith = (authorization?: string) => {
      const md = new grpc.Metadata();
      if (authorization) md.set('authorization', authorization);
      return new Promise<number>((resolve) =>
        client.Call({ api_name: 'echo', json: { numberValue: 1 } } as RequestMessage, md, (err) =>
          resolve(err ? err.code : GrpcStatus.OK),
        ),
      );
    };
    try {
      expect(await callWith()).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await callWith('Bearer nope')).toBe(GrpcStatus.UNAUTHENTICATED);
      expect(await callWith(`Bearer ${TOKEN}`)).toBe(GrpcStatus.OK);
    } finally {
      client.close();
    }
    const Health = grpc.makeGenericClientConstructor(
      {
        Check: {
          path: '/grpc.health.v1.Health/Check',
          requestStream: false,
          responseStream: false,
          requestSerialize: () => Buffer.alloc(0),
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      'Health',
    );
    const health = new Health(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Check(req: object, cb: (err: grpc.ServiceError | null) => void): void;
    };
    const err = await new Promise<grpc.ServiceError | null>((resolve) => health.Check({}, resolve));
    health.close();
    expect(err).toBeNull();
  });
});

describe('bearerAuth', () => {
  it('refuses a token with spaces or an empty one', () => {
    expect(() => bearerAuth({ token: ' a' })).toThrow(/without spaces/);
    expect(() => bearerAuth({ token: '' })).toThrow(/non-empty/);
  });
});
