/**
 * gRPC vs HTTP: calls per second of the same 1k-float NumpyNdarray echo API over both transports, served by one
 * child process (pinned), with the same closed-loop load from this process (a fixed number of calls in flight
 * for a fixed time; HTTP over keep-alive sockets, gRPC over several channels so one HTTP/2 connection is not
 * the limit). Runs alternate.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { inferenceClientConstructor, type RequestMessage, type ResponseMessage } from '@tiffin/core';
import { inferenceServiceDefinition } from '@tiffin/core/internal';
import { cpuPinning } from './cpu-pinning.js';
import { startServer, stopServer } from './servers/spawn.js';
import { cpuSeconds, type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const IN_FLIGHT = 32;
const CHANNELS = 4;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const VALUES = Array.from({ length: 1000 }, (_, i) => i / 7);

type CallFn = (lane: number) => Promise<void>;
type GrpcClient = grpc.Client & {
  Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
};

/** Calls per second, and the server's CPU µs per call (from /proc: steadier than calls/s when the machine is busy). */
interface LoopRun {
  rate: number;
  cpuUs: number;
}

async function closedLoop(call: CallFn, seconds: number, serverPid?: number): Promise<LoopRun> {
  const cpuBefore = serverPid === undefined ? Number.NaN : cpuSeconds(serverPid);
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
  const cpuUs = serverPid === undefined ? Number.NaN : ((cpuSeconds(serverPid) - cpuBefore) / done) * 1e6;
  return { rate: done / ((performance.now() - started) / 1000), cpuUs };
}

export interface GrpcVsHttpResult {
  http: Spread;
  grpc: Spread;
  ratio: Spread;
  /** Server CPU µs per call. */
  cpuUs: { http: Spread; grpc: Spread };
  /** Who made the load: `h2load` (nghttp2's C load generator) when installed, else clients in this process. */
  loadGenerator: string;
}

/** Whether nghttp2's h2load is on PATH (Debian: `apt-get install nghttp2-client`). */
function hasH2load(): boolean {
  try {
    execFileSync('h2load', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * One h2load run (pinned like the rest of the load generation): calls/s of `url` with the body in `file`,
 * `clients` connections and `streams` calls in flight on each. Every call must succeed.
 */
function h2load(
  url: string,
  file: string,
  headers: string[],
  clients: number,
  streams: number,
  seconds: number,
  h1: boolean,
): number {
  const args = [
    ...(h1 ? ['--h1'] : []),
    '-c',
    String(clients),
    '-m',
    String(streams),
    '-D',
    String(seconds),
    '--warm-up-time',
    '1',
    '-d',
    file,
    ...headers.flatMap((h) => ['-H', h]),
    url,
  ];
  const run = spawnSync('h2load', args, { encoding: 'utf8' });
  const rate = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(run.stdout);
  const failed =
    /requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed, (\d+) errored/.exec(run.stdout);
  if (!rate || !failed || failed[1] !== '0' || failed[2] !== '0') {
    throw new Error(`h2load ${url} failed:\n${run.stdout.slice(-800)}${run.stderr.slice(-400)}`);
  }
  return Number(rate[1]);
}

export async function runGrpcVsHttp(rounds = 3): Promise<GrpcVsHttpResult> {
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
    const pid = server.child.pid;
    // A call through each client first: the echo answers, over both transports.
    await httpCall(0);
    await grpcCall(0);
    const http: LoopRun[] = [];
    const rpc: LoopRun[] = [];
    if (hasH2load()) {
      // The same 32 calls in flight from a C load generator: HTTP/1.1 over 32 keep-alive connections, gRPC
      // over 4 HTTP/2 connections of 8 streams. grpc-js as a client costs more CPU per call than the server
      // does, so clients in this process measure themselves.
      const dir = mkdtempSync(join(tmpdir(), 'tiffin-bench-grpc-'));
      try {
        const grpcBody = inferenceServiceDefinition().Call!.requestSerialize(message) as Buffer;
        const frame = Buffer.alloc(5);
        frame.writeUInt32BE(grpcBody.length, 1);
        writeFileSync(join(dir, 'grpc.bin'), Buffer.concat([frame, grpcBody]));
        writeFileSync(join(dir, 'http.bin'), body);
        const measure = (fn: () => number): LoopRun => {
          const before = cpuSeconds(pid!);
          const started = performance.now();
          const rate = fn();
          // The server also worked through h2load's warm-up second, at about the same rate.
          const calls = rate * ((performance.now() - started) / 1000);
          return { rate, cpuUs: ((cpuSeconds(pid!) - before) / calls) * 1e6 };
        };
        const httpLoad = () =>
          h2load(
            `${server.url}/echo`,
            join(dir, 'http.bin'),
            ['content-type: application/json'],
            IN_FLIGHT,
            1,
            SECONDS,
            true,
          );
        const grpcLoad = () =>
          h2load(
            `http://${address}/bentoml.grpc.v1.BentoService/Call`,
            join(dir, 'grpc.bin'),
            ['content-type: application/grpc', 'te: trailers'],
            CHANNELS,
            IN_FLIGHT / CHANNELS,
            SECONDS,
            false,
          );
        for (let i = 0; i < rounds; i++) {
          http.push(measure(httpLoad));
          rpc.push(measure(grpcLoad));
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } else {
      await closedLoop(httpCall, 1);
      await closedLoop(grpcCall, 1);
      for (let i = 0; i < rounds; i++) {
        http.push(await closedLoop(httpCall, SECONDS, pid));
        rpc.push(await closedLoop(grpcCall, SECONDS, pid));
      }
    }
    return {
      http: spread(http.map((r) => r.rate)),
      grpc: spread(rpc.map((r) => r.rate)),
      ratio: spread(rpc.map((g, i) => g.rate / http[i]!.rate)),
      cpuUs: { http: spread(http.map((r) => r.cpuUs)), grpc: spread(rpc.map((r) => r.cpuUs)) },
      loadGenerator: hasH2load() ? 'h2load' : 'clients in this process (install nghttp2-client for h2load)',
    };
  } finally {
    for (const c of clients) c.close();
    agent.destroy();
    unpin();
    await stopServer(server.child);
  }
}
