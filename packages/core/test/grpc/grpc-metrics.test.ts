import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadInput,
  type GrpcServerHandle,
  inferenceClientConstructor,
  Service,
  serveGrpc,
  Text,
} from '../../src/index.js';

type Reply = { text?: { value: string } };
type Client = grpc.Client & {
  Call(req: object, cb: (err: grpc.ServiceError | null, res: Reply) => void): void;
};

const registry = new Registry();
const svc = new Service('grpc_metrics')
  .api({ name: 'shout', input: new Text(), output: new Text() }, (s) => s.toUpperCase())
  .api({ name: 'refuse', input: new Text(), output: new Text() }, () => {
    throw new BadInput('no');
  });
let server: GrpcServerHandle;
let client: Client;

beforeAll(async () => {
  server = await serveGrpc(svc, { port: 0, metricsRegistry: registry, log: () => undefined });
  const Ctor = inferenceClientConstructor();
  client = new Ctor(server.address, grpc.credentials.createInsecure()) as unknown as Client;
});
afterAll(async () => {
  client.close();
  await server.close();
});

const call = (api_name: string) =>
  new Promise<grpc.ServiceError | null>((resolve) =>
    client.Call({ api_name, text: { value: 'hi' } }, (err) => resolve(err)),
  );

/** The value of one series of the registry's text exposition ('' labels match by inclusion). */
async function series(name: string, labels: string): Promise<number> {
  const text = await registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : Number.NaN;
}

describe('gRPC call metrics', () => {
  it('count calls per API and status code, time them, and return in-progress to zero', async () => {
    for (let i = 0; i < 3; i++) expect(await call('shout')).toBeNull();
    expect((await call('refuse'))?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await call('no_such_api'))?.code).toBe(grpc.status.NOT_FOUND);
    const ok = 'api_name="shout",service_name="grpc_metrics",grpc_code="0"';
    expect(await series('tiffin_grpc_server_request_total', ok)).toBe(3);
    expect(await series('tiffin_grpc_server_request_duration_seconds_count', ok)).toBe(3);
    expect(
      await series(
        'tiffin_grpc_server_request_total',
        'api_name="refuse",service_name="grpc_metrics",grpc_code="3"',
      ),
    ).toBe(1);
    // An unknown name is one label, whatever the client sent.
    expect(
      await series(
        'tiffin_grpc_server_request_total',
        'api_name="<unknown>",service_name="grpc_metrics",grpc_code="5"',
      ),
    ).toBe(1);
    expect(await series('tiffin_grpc_server_request_in_progress', 'api_name="shout"')).toBe(0);
  });
});
