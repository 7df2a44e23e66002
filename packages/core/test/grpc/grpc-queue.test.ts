import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GrpcServerHandle,
  inferenceClientConstructor,
  type RequestMessage,
  type ResponseMessage,
  Service,
  serveGrpc,
  Text,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import { sleep, start } from '../server/helpers.js';

/**
 * An API's queue over gRPC (docs/spec/io-descriptors.md §10.9): metadata `priority` orders the waiting calls as
 * the HTTP header does, and a call whose gRPC deadline passes while it waits ends DEADLINE_EXCEEDED unrun.
 */
const runs: string[] = [];
const held = new Map<string, () => void>();

const svc = new Service('grpc_queue').api(
  { name: 'held', input: new Text(), output: new Text(), concurrency: 1, queue: 8, queuePerClient: 8 },
  async (input: string) => {
    runs.push(input);
    if (input.startsWith('hold')) await new Promise<void>((resolve) => held.set(input, resolve));
    return input;
  },
);

type Client = grpc.Client & {
  Call(
    req: RequestMessage,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void,
  ): void;
};

let http: Awaited<ReturnType<typeof start>>;
let server: GrpcServerHandle;
let client: Client;

beforeAll(async () => {
  http = await start(svc);
  server = await serveGrpc(svc, { port: 0, runtime: http.app.runtime, logger: false });
  const Ctor = inferenceClientConstructor();
  client = new Ctor(server.address, grpc.credentials.createInsecure()) as unknown as Client;
});
afterAll(async () => {
  for (const release of held.values()) release();
  client?.close();
  await server?.close();
  await http?.close();
});

function call(text: string, priority?: string, deadline?: Date): Promise<string | grpc.ServiceError> {
  const metadata = new grpc.Metadata();
  if (priority) metadata.set('priority', priority);
  return new Promise((resolve) =>
    client.Call(
      { api_name: 'held', text: { value: text } },
      metadata,
      deadline ? { deadline } : {},
      (err, res) => resolve(err ?? res.text?.value ?? ''),
    ),
  );
}

const depth = () => http.app.runtime.queue('held')?.depth ?? -1;

async function until(done: () => boolean): Promise<void> {
  while (!done()) await sleep(5);
}

describe('an API queue over gRPC', () => {
  it('runs the call with metadata priority u=0 before the u=7 one queued earlier', async () => {
    const holding = call('hold');
    await until(() => held.has('hold'));
    const low = call('low', 'u=7');
    await until(() => depth() === 1);
    const high = call('high', 'u=0');
    await until(() => depth() === 2);
    held.get('hold')?.();
    expect(await Promise.all([holding, low, high])).toEqual(['hold', 'low', 'high']);
    expect(runs).toEqual(['hold', 'high', 'low']);
  });

  it('ends a call whose deadline passes while it waits with DEADLINE_EXCEEDED, never running it', async () => {
    const holding = call('hold-2');
    await until(() => held.has('hold-2'));
    const late = await call('late', undefined, new Date(Date.now() + 200));
    expect((late as grpc.ServiceError).code).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    await until(() => depth() === 0);
    held.get('hold-2')?.();
    expect(await holding).toBe('hold-2');
    expect(runs).not.toContain('late');
  });
});
