import { connect, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type GrpcServerHandle,
  inferenceClientConstructor,
  type RequestMessage,
  type ResponseMessage,
  Service,
  serveGrpc,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import { PlainText, sleep, start } from './helpers.js';

// Bodies held across requests are bounded together: uploads that stall part-way hold bytes, and once they
// hold the budget a new body is refused with 503 BODY_BUDGET_FULL (HTTP APIs, mounted routes, gRPC messages
// alike) while small calls and the probes are answered; the bytes come back when those requests end.

let handle: Awaited<ReturnType<typeof start>> | undefined;
let rpc: GrpcServerHandle | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await rpc?.close();
  rpc = undefined;
  await handle?.close();
  handle = undefined;
});

const KiB = 1024;
const BUDGET = 1024 * KiB;

function service(): Service {
  const svc = new Service('body_budget');
  svc.api({ input: new PlainText(), output: new PlainText() }, function size(s: string) {
    return String(s.length);
  });
  const router = new Router();
  router.post('/hook', koaBody({ textLimit: '2mb' }), (ctx) => {
    ctx.body = { got: String(ctx.request.body).length };
  });
  svc.mount(router.routes(), { public: true });
  return svc;
}

/** A connection that declares `declared` bytes of body, sends `sent` of them and stalls. */
function stalledUpload(port: number, path: string, declared: number, sent: number): void {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${declared}\r\n\r\n`,
  );
  socket.write('x'.repeat(sent));
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${handle!.url}/metrics`)).text();
  return Number(text.match(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm'))?.[1] ?? Number.NaN);
}

/** Polls `probe` until `ok` holds (the test's own timeout bounds the wait). */
async function until(probe: () => Promise<number>, ok: (n: number) => boolean): Promise<void> {
  while (!ok(await probe())) await sleep(50);
}

const post = (path: string, bytes: number) =>
  fetch(`${handle!.url}${path}`, {
    method: 'POST',
    body: 'y'.repeat(bytes),
    headers: { 'content-type': 'text/plain' },
  });

type Client = grpc.Client & {
  Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
};

describe('the body budget', () => {
  it('refuses new bodies with 503 BODY_BUDGET_FULL while stalled uploads hold it, on every path', async () => {
    const svc = service();
    handle = await start(svc, {
      maxBodySize: 2 * BUDGET,
      maxBufferedBytes: BUDGET,
      bodyTimeout: 60,
      timeout: 120,
    });
    // One transport's budget for both: gRPC calls go through the HTTP server's runtime.
    rpc = await serveGrpc(svc, {
      port: 0,
      logger: false,
      runtime: handle.app.runtime,
      runStartupHooks: false,
    });
    // Three uploads (an API, a mounted route, an API) each send 320 KiB of a 1 MiB body and stall.
    stalledUpload(handle.port, '/size', BUDGET, 320 * KiB);
    stalledUpload(handle.port, '/hook', BUDGET, 320 * KiB);
    stalledUpload(handle.port, '/size', BUDGET, 320 * KiB);
    await until(
      () => metric('tiffin_api_server_body_bytes_held'),
      (n) => n >= 960 * KiB,
    );

    // On main: each new body was buffered whatever the others held. Here the next large one is refused…
    for (const path of ['/size', '/hook', '/v2/models/size/infer']) {
      const refused = await post(path, 200 * KiB);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { code: string }).code).toBe('BODY_BUDGET_FULL');
    }
    const Ctor = inferenceClientConstructor();
    const client = new Ctor(rpc.address, grpc.credentials.createInsecure()) as unknown as Client;
    const call = (text: string) =>
      new Promise<{ err: grpc.ServiceError | null; res?: ResponseMessage }>((resolve) =>
        client.Call({ api_name: 'size', text: { value: text } }, (err, res) => resolve({ err, res })),
      );
    try {
      const big = await call('z'.repeat(200 * KiB));
      expect(big.err?.code).toBe(GrpcStatus.UNAVAILABLE);
      // …while small calls and the probes are answered.
      expect((await call('small')).res?.text?.value).toBe('5');
      const small = await post('/size', 10);
      expect(small.status).toBe(200);
      expect(await small.text()).toBe('10');
      expect((await fetch(`${handle.url}/livez`)).status).toBe(200);
      expect(await metric('tiffin_api_server_bodies_shed_total')).toBe(4);

      // The stalled uploads end (their clients leave): their bytes come back, and large bodies are read again.
      for (const s of sockets.splice(0)) s.destroy();
      await until(
        () => metric('tiffin_api_server_body_bytes_held'),
        (n) => n === 0,
      );
      const again = await post('/size', 200 * KiB);
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(String(200 * KiB));
      expect((await call('z'.repeat(200 * KiB))).res?.text?.value).toBe(String(200 * KiB));
    } finally {
      client.close();
    }
  });
});
