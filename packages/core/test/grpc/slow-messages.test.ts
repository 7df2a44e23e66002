import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
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
import { partialGrpcMessage } from './partial-message.js';

// Calls whose request message never finishes arriving: the per-message time limit ends them, so what they
// buffered is dropped, while other calls keep being answered.

let server: GrpcServerHandle | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Client = grpc.Client & {
  Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
};

const MESSAGE_BYTES = 4 * 1024 * 1024;

/** Bytes held in Buffers (where grpc-js keeps a message's chunks) once garbage is collected. */
function buffersAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().arrayBuffers;
}

describe('gRPC messages that never finish', () => {
  it('ends a call whose message does not arrive in messageTimeout, answering the others', async () => {
    const svc = new Service('slow_messages');
    svc.api({ input: new Text(), output: new Text() }, function yo(s: string) {
      return `yo ${s}`;
    });
    const registry = new Registry();
    server = await serveGrpc(svc, {
      port: 0,
      log: () => undefined,
      messageTimeout: 1,
      metricsRegistry: registry,
    });
    const buffersBefore = buffersAfterGc();
    const held = Array.from(
      { length: 16 },
      () => partialGrpcMessage(server!.address, MESSAGE_BYTES, MESSAGE_BYTES - 1).status,
    );
    const Ctor = inferenceClientConstructor();
    const client = new Ctor(server.address, grpc.credentials.createInsecure()) as unknown as Client;
    try {
      const answer = await new Promise<ResponseMessage>((resolve, reject) =>
        client.Call({ api_name: 'yo', text: { value: 'x' } }, (err, res) =>
          err ? reject(err) : resolve(res),
        ),
      );
      expect(answer.text?.value).toBe('yo x');
      // On main: these calls stayed open for good, each holding its 4 MiB.
      expect(await Promise.all(held)).toEqual(Array(16).fill(String(GrpcStatus.DEADLINE_EXCEEDED)));
      // Counted, as calls whose API is not known yet.
      const total = await registry.getSingleMetricAsString('tiffin_grpc_server_request_total');
      expect(total).toContain(
        `tiffin_grpc_server_request_total{api_name="<unknown>",service_name="slow_messages",grpc_code="${GrpcStatus.DEADLINE_EXCEEDED}"} 16`,
      );
      // What they had buffered (16 × 4 MiB, on the server and in this test's clients) is gone with them, once
      // the server has seen their streams close (the test's timeout bounds the wait).
      while (buffersAfterGc() - buffersBefore >= 2 * MESSAGE_BYTES) await sleep(100);
    } finally {
      client.close();
    }
  });
});
