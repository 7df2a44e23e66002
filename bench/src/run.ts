/** `pnpm bench`: prints throughput and ratios against baselines measured in the same run (no pass/fail). */
import { stepProgress } from '@tiffin/cli';
import { benchBatching } from './batching.js';
import { benchHttpEcho } from './http-echo.js';
import { benchNdarrayParse } from './ndarray-parse.js';
import { fmt, fmtSpread, loadAverage } from './stats.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
// The echo ratios move by ±0.05–0.1 between 3-round runs on a shared VM: 5 rounds unless BENCH_ROUNDS says.
const echoRounds = Number(process.env.BENCH_ROUNDS ?? 5);
const only = process.env.BENCH_ONLY?.split(',');
const wanted = (name: string) => !only || only.includes(name);
console.log(
  `Tiffin benchmarks (node ${process.version}, loopback, ${rounds} alternated runs of ${seconds}s; median (min, max))`,
);
console.log(`load average at start: ${loadAverage()}\n`);
// Each benchmark runs for tens of seconds to minutes: say which one is running (stderr; results on stdout).
const progress = stepProgress();

if (wanted('batching')) {
  progress.step('Running the benchmark: adaptive batching (tfjs and onnxruntime models, 64 clients)');
  const b = await benchBatching({ seconds, rounds });
  const workloads = [
    ['dense 256x256 float32 layer as a bare tf.matMul', b.dense],
    [`tf.sequential of ${b.layers} dense 256-wide layers, model.predict`, b.mlp],
    [`tf.sequential of ${b.deepLayers} dense 256-wide layers, model.predict`, b.mlp_deep],
    [`ONNX model of ${b.onnxLayers} dense ${b.onnxWidth}-wide layers on onnxruntime (1 thread)`, b.onnx_mlp],
  ] as const;
  console.log(`Adaptive batching, 64 concurrent single-row clients (${b.pinning}):`);
  for (const [title, w] of workloads) {
    console.log(`  ${title}:`);
    console.log(
      `    cost per call: batch 1 ${fmt(w.costs.batch1, 3)} ms, batch 32 ${fmt(w.costs.batch32, 3)} ms (${fmt(w.costs.batch32 / w.costs.batch1, 1)}x for 32x the rows)`,
    );
    for (const [label, t] of [
      ['NumpyNdarray JSON', w.json],
      ['v2 binary tensor', w.v2Binary],
    ] as const) {
      console.log(`    ${label}:`);
      console.log(
        `      batchable     req/s ${fmtSpread(t.batchable.rps)}   p99 ms ${fmtSpread(t.batchable.p99, 1)}`,
      );
      console.log(
        `      not batchable req/s ${fmtSpread(t.single.rps)}   p99 ms ${fmtSpread(t.single.p99, 1)}`,
      );
      console.log(`      ratio batchable/not    ${fmtSpread(t.ratio, 2)}x   (target >= 4x)`);
    }
    console.log(
      `    p99 bound: max_latency_ms ${b.maxLatencyMs} + learnt full batch ${fmt(w.costs.learntFullBatch, 2)} ms = ${fmt(b.maxLatencyMs + w.costs.learntFullBatch, 1)} ms`,
    );
  }
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('onnx')) {
  const { benchZeroCodeOnnx, ZERO_CODE_WORKLOADS } = await import('./zero-code-onnx.js');
  for (const z of await benchZeroCodeOnnx({ seconds, rounds })) {
    console.log(
      `Zero-code ONNX: tiffin serve model.onnx (1 instance, 1 thread) vs node:http + onnxruntime-node on the main thread, 64 connections of one row, JSON (${z.description}):`,
    );
    for (const [name, r] of Object.entries(z.results)) {
      const w = ZERO_CODE_WORKLOADS[name as keyof typeof ZERO_CODE_WORKLOADS];
      console.log(`  ${name}: ${w.inWidth} in, ${w.layers} layers ${w.hidden} wide, ${w.outWidth} out`);
      for (const [label, t] of [
        ['plain node:http + ort        ', r.plain],
        ['plain, model on a thread     ', r.threaded],
        ['tiffin, not batched          ', r.unbatched],
        ['tiffin, on the event loop    ', r.inline],
        ['tiffin, batched (32 rows)    ', r.batched],
      ] as const) {
        console.log(
          `    ${label} req/s ${fmtSpread(t.rps)}   p99 ms ${fmtSpread(t.p99, 1)}   /livez p99 ms ${fmtSpread(t.livezP99, 1)}   server CPU µs/request ${fmtSpread(t.cpuUs)}`,
        );
      }
      console.log(
        `    ratio not batched / plain      ${fmtSpread(r.unbatchedRatio, 3)}x   (target >= 0.95x)`,
      );
      console.log(
        `    ratio plain on a thread / plain ${fmtSpread(r.threadedRatio, 3)}x   (control: the thread alone)`,
      );
      console.log(`    ratio event loop / plain       ${fmtSpread(r.inlineRatio, 3)}x   (--instances 0)`);
      console.log(`    ratio batched / plain          ${fmtSpread(r.batchedRatio, 2)}x   (target >= 4x)`);
    }
    console.log(`  load average at the end of these runs: ${z.loadAverage}\n`);
  }
}

if (wanted('echo')) {
  progress.step('Running the benchmark: JSON echo against fastify (autocannon)');
  const e = await benchHttpEcho({ seconds, rounds: echoRounds });
  console.log(`JSON echo, autocannon 50 connections, ${echoRounds} rounds, req/s (${e.pinning}):`);
  console.log(`  tiffin serve (default logging)  ${fmtSpread(e.rps.tiffinServe)}`);
  console.log(`  fastify 5                       ${fmtSpread(e.rps.fastify)}`);
  console.log(`  ratio tiffin serve / fastify    ${fmtSpread(e.serveVsFastify, 3)}x   (target >= 0.9x)`);
  console.log(`  fastify 5, one access line/req  ${fmtSpread(e.rps.fastifyLogged)}`);
  console.log(
    `  ratio tiffin serve / fastify logging the same  ${fmtSpread(e.serveVsFastifyLogged, 3)}x   (target >= 0.9x)`,
  );
  console.log(`  tiffin serve(), logging off     ${fmtSpread(e.rps.tiffinQuiet)}`);
  console.log(`  bare node:http                  ${fmtSpread(e.rps.nodeHttp)}`);
  console.log(`  ratio tiffin quiet / node:http  ${fmtSpread(e.quietVsNode, 3)}x   (target >= 0.9x)`);
  console.log('  server CPU per request, us (steadier than req/s when other work shares the machine):');
  console.log(
    `    serve ${fmt(e.cpuUs.tiffinServe.median, 1)}  fastify ${fmt(e.cpuUs.fastify.median, 1)}  fastify logged ${fmt(e.cpuUs.fastifyLogged.median, 1)}  quiet ${fmt(e.cpuUs.tiffinQuiet.median, 1)}  node:http ${fmt(e.cpuUs.nodeHttp.median, 1)}`,
  );
  console.log('  cost ratios per round, baseline CPU / tiffin CPU:');
  console.log(`    fastify logging the same / serve  ${fmtSpread(e.cpuRatios.serveVsFastifyLogged, 3)}x`);
  console.log(`    fastify / serve                   ${fmtSpread(e.cpuRatios.serveVsFastify, 3)}x`);
  console.log(`    node:http / quiet                 ${fmtSpread(e.cpuRatios.quietVsNode, 3)}x`);
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('mount')) {
  const { benchMountOverhead } = await import('./mount-overhead.js');
  const m = await benchMountOverhead({ seconds, rounds });
  console.log(
    `JSON echo API on quiet serve(), with and without a mounted @koa/router, req/s (${m.pinning}):`,
  );
  if (m.rps.base) console.log(`  base build ($BENCH_BASE_CORE)   ${fmtSpread(m.rps.base)}`);
  console.log(`  nothing mounted                 ${fmtSpread(m.rps.none!)}`);
  console.log(`  router mounted                  ${fmtSpread(m.rps.router!)}`);
  if (m.noneVsBase)
    console.log(`  ratio nothing mounted / base    ${fmtSpread(m.noneVsBase, 3)}x   (target 1x)`);
  console.log(
    `  ratio router / nothing mounted  ${fmtSpread(m.routerVsNone, 3)}x   (target: a few % lost at most)`,
  );
  console.log(
    `  server CPU per request, us: ${Object.entries(m.cpuUs)
      .map(([name, s]) => `${name} ${fmtSpread(s, 1)}`)
      .join(', ')}`,
  );
  if (m.cpuNoneVsBase) console.log(`  cost ratio base / nothing mounted ${fmtSpread(m.cpuNoneVsBase, 3)}x`);
  console.log(`  cost ratio nothing mounted / router ${fmtSpread(m.cpuRouterVsNone, 3)}x`);
  console.log(`  load average: ${loadAverage()}`);
  const { benchMountJsCost } = await import('./mount-overhead.js');
  const j = benchMountJsCost({ rounds });
  console.log(`  JavaScript CPU per request over in-memory sockets, us (${j.pinning}):`);
  for (const [name, s] of Object.entries(j.cpuUs)) console.log(`    ${name.padEnd(8)} ${fmtSpread(s, 1)}`);
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('tracing')) {
  progress.step('Running the benchmark: OpenTelemetry tracing off and on, JavaScript CPU per JSON echo');
  const { benchTracingOverhead } = await import('./tracing-overhead.js');
  const t = benchTracingOverhead({ rounds: echoRounds });
  console.log(`Tracing: JavaScript CPU per JSON echo over in-memory sockets, us (${t.pinning}):`);
  for (const [name, s] of Object.entries(t.cpuUs)) console.log(`  ${name.padEnd(22)} ${fmtSpread(s, 1)}`);
  for (const [name, s] of Object.entries(t.vsOff))
    console.log(`  CPU ratio ${name.padEnd(22)} / off ${fmtSpread(s, 3)}x   (above 1: costs more)`);
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('cache')) {
  progress.step('Running the benchmark: response cache hit against a plain call');
  const { benchResponseCache } = await import('./response-cache.js');
  const c = await benchResponseCache({ seconds, rounds });
  console.log(`Response cache: the JSON echo API, every cached call a hit (${c.pinning}):`);
  for (const [name, s] of Object.entries(c.rps))
    console.log(
      `  ${name.padEnd(8)} req/s ${fmtSpread(s)}   server CPU us/req ${fmtSpread(c.cpuUs[name]!, 1)}`,
    );
  console.log(`  ratio hit / plain echo            ${fmtSpread(c.hitVsPlain, 3)}x`);
  console.log(`  ratio hit / 1 ms function         ${fmtSpread(c.workHitVsWork, 2)}x`);
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('priority')) {
  progress.step('Running the benchmark: high-priority latency under a saturating low-priority load');
  const { benchQueuePriority } = await import('./queue-priority.js');
  const q = await benchQueuePriority({ seconds, rounds });
  console.log(
    `API queue priorities: concurrency 2, 2 ms calls, 64 low-priority connections back to back, one high-priority caller (${q.pinning}):`,
  );
  for (const [name, r] of [
    ['with u=0 / u=7', q.with],
    ['without (FIFO)', q.without],
  ] as const)
    console.log(
      `  ${name}  high p50 ms ${fmtSpread(r.p50, 2)}   p99 ms ${fmtSpread(r.p99, 2)}   low req/s ${fmtSpread(r.lowRps)}`,
    );
  console.log(
    `  ratio with / without priorities: p50 ${fmtSpread(q.p50Ratio, 3)}x   p99 ${fmtSpread(q.p99Ratio, 3)}x`,
  );
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('jscost')) {
  progress.step('Running the benchmark: JavaScript CPU per request');
  const { benchHttpJsCost } = await import('./http-js-cost.js');
  const j = benchHttpJsCost({ rounds });
  console.log(`JSON echo, JavaScript CPU per request over in-memory sockets, us (${j.pinning}):`);
  console.log(`  bare node:http                  ${fmtSpread(j.cpuUs.node, 1)}`);
  console.log(`  fastify 5                       ${fmtSpread(j.cpuUs.fastify, 1)}`);
  console.log(`  fastify 5, one access line/req  ${fmtSpread(j.cpuUs['fastify-log'], 1)}`);
  console.log(`  tiffin, logging off             ${fmtSpread(j.cpuUs.tiffin, 1)}`);
  console.log(`  tiffin, default logging         ${fmtSpread(j.cpuUs['tiffin-log'], 1)}`);
  console.log(
    `  cost ratios (baseline / tiffin): fastify logging the same / tiffin-log ${fmt(j.cpuUs['fastify-log'].median / j.cpuUs['tiffin-log'].median, 3)}x, fastify / tiffin-log ${fmt(j.cpuUs.fastify.median / j.cpuUs['tiffin-log'].median, 3)}x, node / tiffin ${fmt(j.cpuUs.node.median / j.cpuUs.tiffin.median, 3)}x`,
  );
  console.log(`  load average: ${loadAverage()}\n`);
}

if (wanted('parse')) {
  progress.step('Running the benchmark: NumpyNdarray parse of 1M floats');
  const parse = await benchNdarrayParse();
  console.log(`NumpyNdarray parse, 1M float64 as a ${fmt(parse.bodyMB, 1)} MB JSON body, MB/s (best of 5):`);
  console.log(`  tiffin NumpyNdarray           ${fmt(parse.tiffinMBps, 1)}`);
  console.log(`  JSON.parse -> Float64Array    ${fmt(parse.baselineMBps, 1)}`);
  console.log(
    `  ratio tiffin/baseline         ${fmt(parse.tiffinMBps / parse.baselineMBps, 3)}x   (target >= 0.8x)\n`,
  );
}

if (wanted('grpc')) {
  progress.step('Running the benchmark: gRPC against HTTP');
  const { runGrpcVsHttp } = await import('./grpc-vs-http.js');
  const t = await runGrpcVsHttp(rounds);
  console.log(
    `NumpyNdarray 1k-float echo, 32 calls in flight, calls/s (load: ${t.loadGenerator}; server in a child):`,
  );
  console.log(`  HTTP                          ${fmtSpread(t.http)}`);
  console.log(`  gRPC                          ${fmtSpread(t.grpc)}`);
  console.log(`  ratio gRPC/HTTP               ${fmtSpread(t.ratio, 3)}x   (target >= 0.9x)`);
  console.log(
    `  server CPU per call, us: HTTP ${fmtSpread(t.cpuUs.http, 1)}, gRPC ${fmtSpread(t.cpuUs.grpc, 1)} (cost ratio HTTP/gRPC ${fmt(t.cpuUs.http.median / t.cpuUs.grpc.median, 3)}x)`,
  );
  console.log(`  load average: ${loadAverage()}`);
}

if (wanted('clients')) {
  progress.step('Running the benchmark: @tiffin/client and the v2 protocol');
  const { benchClients, printClients } = await import('./clients.js');
  printClients(await benchClients({ seconds: Math.max(2, Math.round(seconds / 2)) }));
}

if (wanted('switch')) {
  progress.step('Running the benchmark: model repository switching and memory');
  const { benchModelSwitch, printModelSwitch } = await import('./model-switch.js');
  printModelSwitch(await benchModelSwitch({ rounds }), rounds);
}

progress.done();
