import {
  File,
  type GrpcServerHandle,
  JSON as JSONDescriptor,
  Multipart,
  NumpyNdarray,
  Service,
  serveGrpc,
  Text,
} from '@tiffin/core';
import { GrpcStatus } from '@tiffin/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRequest, type RawGrpcClient, rawGrpcClient } from '../src/grpc-raw.js';

const svc = new Service('grpc_garbage');
svc.api({ input: new NumpyNdarray(), output: new NumpyNdarray() }, function nd(x) {
  return x;
});
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function json(v) {
  return v;
});
svc.api({ input: new Text(), output: new Text() }, function text(s) {
  return s;
});
svc.api({ input: new File(), output: new File() }, function file(f) {
  return f.bytes;
});
svc.api(
  { input: new Multipart({ a: new JSONDescriptor(), b: new Text() }), output: new JSONDescriptor() },
  function mp(v) {
    return v;
  },
);

let server: GrpcServerHandle;
let client: RawGrpcClient;
beforeAll(async () => {
  server = await serveGrpc(svc, { port: 0, reflection: false, log: () => {} });
  client = rawGrpcClient(server.address);
});
afterAll(async () => {
  client.close();
  await server.close();
});

/** Deterministic bytes (mulberry32), so a failure names a reproducible case. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('gRPC: undecodable or invalid Call messages', () => {
  it('answers garbage, truncated and mutated messages with INVALID_ARGUMENT-class codes, never INTERNAL', async () => {
    const rand = prng(13);
    const valid = [
      encodeRequest({ api_name: 'nd', ndarray: { dtype: 'DTYPE_FLOAT', shape: [2], float_values: [1, 2] } }),
      encodeRequest({ api_name: 'json', json: { structValue: { fields: { a: { numberValue: 1 } } } } }),
      encodeRequest({ api_name: 'text', text: { value: 'hé' } } as never),
      encodeRequest({ api_name: 'file', file: { kind: 'text/plain', content: Buffer.from('x') } }),
      encodeRequest({
        api_name: 'mp',
        multipart: { fields: { a: { json: { numberValue: 1 } }, b: { text: { value: 'x' } } } },
      } as never),
    ];
    const cases: Buffer[] = [Buffer.from([0xff, 0xff, 0xff]), Buffer.from('\x0a\xff\xff\xff\xff\x0f')];
    for (let i = 0; i < 200; i++) {
      const base = valid[i % valid.length]!;
      const kind = i % 4;
      if (kind === 0)
        cases.push(
          Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 64) }, () => (rand() * 256) | 0)),
        );
      else if (kind === 1) cases.push(base.subarray(0, Math.floor(rand() * base.length)));
      else {
        const copy = Buffer.from(base);
        for (let k = 0; k < 1 + Math.floor(rand() * 3); k++)
          copy[Math.floor(rand() * copy.length)] = (rand() * 256) | 0;
        cases.push(copy);
      }
    }
    const counts = new Map<number, number>();
    for (const bytes of cases) {
      const { code, details } = await client.call(bytes);
      counts.set(code, (counts.get(code) ?? 0) + 1);
      expect(
        [GrpcStatus.INTERNAL, GrpcStatus.UNKNOWN],
        `${bytes.toString('hex')} → ${code} ${details}`,
      ).not.toContain(code);
    }
    expect(counts.get(GrpcStatus.INVALID_ARGUMENT) ?? 0).toBeGreaterThan(0);
  });
});
