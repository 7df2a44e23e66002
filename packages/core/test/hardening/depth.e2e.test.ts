import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  defaultJsonEncoder,
  inferenceClientConstructor,
  JSON as JSONDescriptor,
  Multipart,
  type NDArray,
  NumpyNdarray,
  type RequestMessage,
  Service,
  serveGrpc,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import { nestsDeeperThan } from '../../src/limits/depth.js';
import { resolveLimits } from '../../src/limits/limits.js';
import { start } from '../server/helpers.js';

const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`;
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const svc = new Service('depth_limits');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo_json(v) {
  return v;
});
svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function echo_nd(v: NDArray) {
  return v;
});
svc.api({ input: new NumpyNdarray({ dtype: 'float32' }), output: new NumpyNdarray() }, function echo_f32(v) {
  return v;
});
svc.api(
  { input: new Multipart({ doc: new JSONDescriptor() }), output: new JSONDescriptor() },
  function echo_part(v) {
    return v.doc;
  },
);
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function deep_output(v) {
  let out: unknown = 1;
  for (let i = 0; i < Number(v); i++) out = new Map([['a', out]]);
  return out;
});

let handle: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  handle = await start(svc, { limits: { maxDepth: 64 } });
});
afterAll(async () => {
  await handle.close();
});

const post = (path: string, body: string, type = 'application/json') =>
  fetch(`${handle.url}${path}`, { method: 'POST', body, headers: { 'content-type': type } });

describe('nesting depth', () => {
  it('answers 400 for JSON-ish input deeper than the limit on every descriptor', async () => {
    for (const path of ['/echo_json', '/echo_nd', '/echo_f32']) {
      for (const body of [nested(10_000), nested(65), nestedObject(10_000), `[${nested(100_000)}]`]) {
        const res = await post(path, body);
        expect(res.status, `${path} ${body.slice(0, 20)}`).toBe(400);
        const json = (await res.json()) as { type: string; error: string };
        expect(json.type).toBe('BadInput');
      }
    }
    const res = await post('/echo_json', nested(64));
    expect(res.status).toBe(200);
  });

  it('checks the depth of JSON in a multipart part', async () => {
    const form = new FormData();
    form.set('doc', nested(10_000));
    const res = await fetch(`${handle.url}/echo_part`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
  });

  it('answers a too-deep result with a 500 naming the limit, not a stack overflow', async () => {
    const res = await post('/deep_output', '100000');
    expect(res.status).toBe(500);
    expect((await fetch(`${handle.url}/livez`)).status).toBe(200);
    expect(handle.logs.records.some((e) => JSON.stringify(e).includes('deeper than'))).toBe(true);
  });

  it("bounds the encoder's walk over a result by the configured depth, not the default", async () => {
    // 100 levels: under the default 512, over this server's 64.
    const res = await post('/deep_output', '100');
    expect(res.status).toBe(500);
    expect(handle.logs.records.some((e) => JSON.stringify(e).includes('deeper than 64 levels'))).toBe(true);
    expect((await post('/deep_output', '20')).status).toBe(200);
  });
});

/** A google.protobuf.Value nesting `depth` lists (a scalar inside). */
function nestedValue(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { numberValue: 1 };
  for (let i = 0; i < depth; i++) value = { listValue: { values: [value] } };
  return value;
}

describe('nesting depth over gRPC: the configured limits, as on HTTP', () => {
  it('refuses a Struct deeper than limits.maxDepth with INVALID_ARGUMENT and serves one within it', async () => {
    const rpc = await serveGrpc(svc, { port: 0, reflection: false, limits: { maxDepth: 8 }, log: () => {} });
    const Client = inferenceClientConstructor();
    const client = new Client(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res?: unknown) => void): void;
    };
    const call = (depth: number) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        client.Call({ api_name: 'echo_json', json: nestedValue(depth) } as RequestMessage, (err) =>
          resolve(err),
        ),
      );
    try {
      const deep = await call(9);
      expect(deep?.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(deep?.details).toMatch(/deeper than 8 levels/);
      expect(await call(7)).toBeNull();
    } finally {
      client.close();
      await rpc.close();
    }
  });

  it('refuses limits beside a shared runtime (that runtime has its own)', async () => {
    await expect(
      serveGrpc(svc, { port: 0, runtime: handle.app.runtime, limits: { maxDepth: 4 } }),
    ).rejects.toThrow(/limits/);
  });
});

describe('limits module', () => {
  it('fills defaults and rejects unknown or invalid limits', () => {
    expect(resolveLimits({ maxDepth: 10 })).toMatchObject({
      maxDepth: 10,
      maxParts: DEFAULT_LIMITS.maxParts,
    });
    expect(() => resolveLimits({ maxDepht: 3 } as never)).toThrow(/Unknown limit 'maxDepht'/);
    expect(() => resolveLimits({ maxParts: -1 })).toThrow(/positive integer/);
  });

  it('measures depth without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(nestsDeeperThan(deep, 512)).toBe(true);
    expect(nestsDeeperThan([[1], { a: [2] }], 3)).toBe(false);
    expect(nestsDeeperThan([[1], { a: [[2]] }], 3)).toBe(true);
    expect(() => defaultJsonEncoder(deep)).toThrow(/deeper than 512/);
    const map = (depth: number): unknown => (depth === 0 ? 1 : new Map([['a', map(depth - 1)]]));
    expect(() => defaultJsonEncoder(map(5), { maxDepth: 4 })).toThrow(/deeper than 4 levels/);
    expect(defaultJsonEncoder(map(4), { maxDepth: 4 })).toEqual({ a: { a: { a: { a: 1 } } } });
    expect(() => defaultJsonEncoder([[[[[1]]]]], { maxDepth: 4 })).toThrow(/deeper than 4 levels/);
  });
});
