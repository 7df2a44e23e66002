/**
 * gRPC vs HTTP: calls per second of the same 1k-float NumpyNdarray echo API over both transports, served by one
 * child process (pinned), with the same closed-loop load from this process (a fixed number of calls in flight
 * for a fixed time; HTTP over keep-alive sockets, gRPC over several channels so one HTTP/2 connection is not
 * the limit). Runs alternate.
 */
import { Agent, request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { inferenceClientConstructor, type RequestMessage, type ResponseMessage } from '@tiffin/core';
import { cpuPinning } from './cpu-pinning.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const IN_FLIGHT = 32;
const CHANNELS = 4;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const VALUES = Array.from({ length: 1000 }, (_, i) => i / 7);

type CallFn = (lane: number) => Promise<void>;
type GrpcClient = grpc.Client & {
  Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
};

async function closedLoop(call: CallFn, seconds: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const lane = async (_: unknown, i: number) => {
    while (performance.now() < deadline) {
      await call(i);
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return done / ((performance.now() - started) / 1000);
}

export async function runGrpcVsHttp(rounds = 3): Promise<{ http: Spread; grpc: Spread; ratio: Spread }> {
  const pinning = cpuPinning();
  const server = await startServer(
    ['--import', 'tsx', join(HERE, 'servers', 'grpc-echo-service.ts')],
    pinning.serverPrefix,
  );
  const unpin = pinning.pinLoadGenerator();
  const address = await (await fetch(`${server.url}/grpc_address`, { method: 'POST', body: '' })).text();
  const body = Buffer.from(JSON.stringify(VALUES));
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const httpCall: CallFn = () =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/echo`,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const Client = inferenceClientConstructor();
  // Distinct channel options keep grpc-js from sharing one subchannel (one HTTP/2 connection) between clients.
  const clients = Array.from(
    { length: CHANNELS },
    (_, i) =>
      new Client(address, grpc.credentials.createInsecure(), {
        'grpc.bench_channel': i,
      }) as unknown as GrpcClient,
  );
  const message: RequestMessage = {
    api_name: 'echo',
    ndarray: { dtype: 'DTYPE_DOUBLE', shape: [1000], double_values: VALUES },
  };
  const grpcCall: CallFn = (lane) =>
    new Promise((resolve, reject) =>
      clients[lane % CHANNELS]!.Call(message, (err) => (err ? reject(err) : resolve())),
    );
  try {
    await closedLoop(httpCall, 1);
    await closedLoop(grpcCall, 1);
    const http: number[] = [];
    const rpc: number[] = [];
    for (let i = 0; i < rounds; i++) {
      http.push(await closedLoop(httpCall, SECONDS));
      rpc.push(await closedLoop(grpcCall, SECONDS));
    }
    return { http: spread(http), grpc: spread(rpc), ratio: spread(rpc.map((g, i) => g / http[i]!)) };
  } finally {
    for (const c of clients) c.close();
    agent.destroy();
    unpin();
    await stopServer(server.child);
  }
}
