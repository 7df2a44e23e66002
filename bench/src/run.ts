/** `pnpm bench`: prints throughput and ratios against named baselines (no pass/fail thresholds). */
import { benchHttpEcho } from './http-echo.js';
import { benchNdarrayParse } from './ndarray-parse.js';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
console.log(`Tiffin benchmarks (node ${process.version}, loopback; load generator shares the machine)\n`);

const echo = await benchHttpEcho({ seconds });
console.log(
  `JSON echo API, autocannon 50 connections, requests/s (mean of 3 alternating runs; ${echo.pinning}):`,
);
console.log(`  tiffin (JSON → JSON API)      ${fmt(echo.tiffin)}`);
console.log(`  koa route (same work)         ${fmt(echo.koa)}`);
console.log(`  ratio tiffin/koa              ${fmt(echo.tiffin / echo.koa, 3)}x   (target >= 0.9x)`);
console.log('Server CPU per request, microseconds (steadier than req/s when other work shares the machine):');
console.log(
  `  tiffin ${fmt(echo.tiffinCpuUs, 1)}   koa ${fmt(echo.koaCpuUs, 1)}   ratio koa/tiffin ${fmt(echo.koaCpuUs / echo.tiffinCpuUs, 3)}x\n`,
);

const parse = await benchNdarrayParse();
console.log(`NumpyNdarray parse, 1M float64 as a ${fmt(parse.bodyMB, 1)} MB JSON body, MB/s (best of 5):`);
console.log(`  tiffin NumpyNdarray           ${fmt(parse.tiffinMBps, 1)}`);
console.log(`  JSON.parse → Float64Array     ${fmt(parse.baselineMBps, 1)}`);
console.log(
  `  ratio tiffin/baseline         ${fmt(parse.tiffinMBps / parse.baselineMBps, 3)}x   (target >= 0.8x)`,
);

const { runGrpcVsHttp } = await import('./grpc-vs-http.js');
const transports = await runGrpcVsHttp();
console.log('\nNumpyNdarray 1k-float echo, 32 calls in flight, calls/s:');
console.log(`  HTTP                          ${fmt(transports.http)}`);
console.log(`  gRPC                          ${fmt(transports.grpc)}`);
console.log(`  ratio gRPC/HTTP               ${fmt(transports.grpc / transports.http, 3)}x`);

const { benchClients, printClients } = await import('./clients.js');
printClients(await benchClients({ seconds: Math.max(2, Math.round(seconds / 2)) }));
