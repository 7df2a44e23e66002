/**
 * gRPC vs HTTP: calls per second of the same 1k-float NumpyNdarray echo API over both transports, in one
 * run on loopback, with the same closed-loop load (a fixed number of calls in flight for a fixed time).
 */
import { Agent, request as httpRequest } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import {
  inferenceClientConstructor,
  type NDArray,
  NumpyNdarray,
  type RequestMessage,
  type ResponseMessage,
  Service,
  serve,
  serveGrpc,
} from '@tiffin/core';

const IN_FLIGHT = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const VALUES = Array.from({ length: 1000 }, (_, i) => i / 7);

type CallFn = () => Promise<void>;

async function closedLoop(call: CallFn, seconds: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const lane = async () => {
    while (performance.now() < deadline) {
      await call();
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return done / ((performance.now() - started) / 1000);
}

export async function runGrpcVsHttp(): Promise<{ http: number; grpc: number }> {
  const svc = new Service('bench_grpc');
  svc.api(
    { input: new NumpyNdarray({ dtype: 'float64' }), output: new NumpyNdarray() },
    function echo(x: NDArray) {
      return x;
    },
  );
  const http = await serve(svc, { port: 0, host: '127.0.0.1', logger: false });
  const rpc = await serveGrpc(svc, { port: 0, runStartupHooks: false, log: () => undefined });
  const body = Buffer.from(JSON.stringify(VALUES));
  const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  const httpCall: CallFn = () =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        `${http.url}/echo`,
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
  const client = new Client(rpc.address, grpc.credentials.createInsecure()) as grpc.Client & {
    Call(req: RequestMessage, cb: (err: grpc.ServiceError | null, res: ResponseMessage) => void): void;
  };
  const message: RequestMessage = {
    api_name: 'echo',
    ndarray: { dtype: 'DTYPE_DOUBLE', shape: [1000], double_values: VALUES },
  };
  const grpcCall: CallFn = () =>
    new Promise((resolve, reject) => client.Call(message, (err) => (err ? reject(err) : resolve())));

  // Warm both paths (JIT, connections) before measuring.
  await closedLoop(httpCall, 1);
  await closedLoop(grpcCall, 1);
  const httpRate = await closedLoop(httpCall, SECONDS);
  const grpcRate = await closedLoop(grpcCall, SECONDS);

  client.close();
  agent.destroy();
  await rpc.close();
  await http.close();
  return { http: httpRate, grpc: grpcRate };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { http, grpc: g } = await runGrpcVsHttp();
  console.log(`NumpyNdarray 1k-float echo, ${IN_FLIGHT} calls in flight, ${SECONDS}s each:`);
  console.log(`  HTTP  ${http.toFixed(0)} calls/s`);
  console.log(`  gRPC  ${g.toFixed(0)} calls/s`);
  console.log(`  ratio gRPC/HTTP = ${(g / http).toFixed(2)}x`);
}
