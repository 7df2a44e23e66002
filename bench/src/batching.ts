import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuPinning } from './cpu-pinning.js';
import { startServer, stopServer } from './servers/spawn.js';
import { type Spread, spread } from './stats.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const WIDTH = 256;
/** As in servers/batching-service.ts. */
const MAX_LATENCY_MS = 100;
const LAYERS = 4;
const DEEP_LAYERS = 8;
/** Width of each workload's rows (as in servers/batching-service.ts and servers/onnx-mlp.ts). */
const ONNX_WIDTH = 1024;
const ONNX_LAYERS = 8;
const WORKLOADS = { dense: WIDTH, mlp: WIDTH, mlp_deep: WIDTH, onnx_mlp: ONNX_WIDTH } as const;
type Workload = keyof typeof WORKLOADS;

/** How a client sends its row: NumpyNdarray JSON to the API's own route, or v2 binary to its model route. */
interface Transport {
  route: (api: string) => string;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** One row of `width` values, in each transport's form. */
function transports(width: number): Record<'json' | 'v2Binary', Transport> {
  const values = Array.from({ length: width }, (_, i) => ((i * 37) % 101) / 101 - 0.5);
  // The Open Inference Protocol's binary tensor extension: a JSON header, then the float32 bytes.
  const v2Header = JSON.stringify({
    inputs: [
      { name: 'input', shape: [1, width], datatype: 'FP32', parameters: { binary_data_size: width * 4 } },
    ],
    outputs: [{ name: 'output', parameters: { binary_data: true } }],
  });
  return {
    json: {
      route: (api) => `/${api}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([values]),
    },
    v2Binary: {
      route: (api) => `/v2/models/${api}/infer`,
      headers: {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': String(Buffer.byteLength(v2Header)),
      },
      body: Buffer.concat([Buffer.from(v2Header), Buffer.from(Float32Array.from(values).buffer)]),
    },
  };
}

interface Run {
  rps: number;
  p99: number;
}

async function load(url: string, seconds: number, connections: number, transport: Transport): Promise<Run> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: transport.headers,
    body: transport.body,
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`load run on ${url} failed: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return { rps: result.requests.average, p99: result.latency.p99 };
}

/** Per-call cost of a workload's function (ms), and the batcher's learnt cost of a full batch. */
export interface CallCosts {
  batch1: number;
  batch32: number;
  learntFullBatch: number;
}

export interface TransportResult {
  batchable: { rps: Spread; p99: Spread };
  single: { rps: Spread; p99: Spread };
  ratio: Spread;
}

export interface WorkloadResult {
  /** Rows as NumpyNdarray JSON text on the API's own route. */
  json: TransportResult;
  /** Rows as float32 bytes in the Open Inference Protocol's binary extension (`/v2/models/<api>/infer`). */
  v2Binary: TransportResult;
  costs: CallCosts;
}

export interface BatchingResult {
  /** One 256×256 layer as a bare matMul. */
  dense: WorkloadResult;
  /** A tf.sequential model of dense 256-wide layers, called with model.predict. */
  mlp: WorkloadResult;
  /** The same with more layers. */
  mlp_deep: WorkloadResult;
  /** An ONNX model of dense 1024-wide layers on onnxruntime. */
  onnx_mlp: WorkloadResult;
  deepLayers: number;
  onnxLayers: number;
  onnxWidth: number;
  maxLatencyMs: number;
  layers: number;
  pinning: string;
}

/**
 * Throughput and p99 latency at 64 concurrent single-row clients of each workload served batchable against
 * the same function not batchable (one server process for all), runs alternated after a warm-up.
 */
export async function benchBatching({
  seconds = 5,
  connections = 64,
  rounds = 3,
} = {}): Promise<BatchingResult> {
  const pinning = cpuPinning();
  const server = await startServer(
    ['--import', 'tsx', join(HERE, 'servers', 'batching-service.ts')],
    pinning.serverPrefix,
  );
  const unpin = pinning.pinLoadGenerator();
  try {
    const results = {} as Record<Workload, WorkloadResult>;
    for (const [name, width] of Object.entries(WORKLOADS) as Array<[Workload, number]>) {
      const byTransport = {} as Record<'json' | 'v2Binary', TransportResult>;
      for (const [kind, transport] of Object.entries(transports(width)) as Array<
        ['json' | 'v2Binary', Transport]
      >) {
        const batchable = `${server.url}${transport.route(name)}`;
        const single = `${server.url}${transport.route(`${name}_one`)}`;
        const call = (url: string) =>
          fetch(url, {
            method: 'POST',
            headers: transport.headers,
            // fetch's body types take a Uint8Array over an ArrayBuffer, not a Buffer.
            body: typeof transport.body === 'string' ? transport.body : Uint8Array.from(transport.body),
          }).then(async (r) => {
            if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
            // The tensor only: a v2 answer's JSON header names its model, which differs between the two APIs.
            const bytes = Buffer.from(await r.arrayBuffer());
            return bytes
              .subarray(Number(r.headers.get('inference-header-content-length') ?? 0))
              .toString('base64');
          });
        if ((await call(batchable)) !== (await call(single))) {
          throw new Error(`${name} (${kind}): batchable and single answers differ`);
        }
        await load(batchable, 2, connections, transport);
        await load(single, 2, connections, transport);
        const runs = { batchable: [] as Run[], single: [] as Run[] };
        for (let i = 0; i < rounds; i++) {
          runs.batchable.push(await load(batchable, seconds, connections, transport));
          runs.single.push(await load(single, seconds, connections, transport));
        }
        const summary = (r: Run[]) => ({
          rps: spread(r.map((x) => x.rps)),
          p99: spread(r.map((x) => x.p99)),
        });
        byTransport[kind] = {
          batchable: summary(runs.batchable),
          single: summary(runs.single),
          ratio: spread(runs.batchable.map((r, i) => r.rps / runs.single[i]!.rps)),
        };
      }
      results[name] = {
        ...byTransport,
        costs: { batch1: Number.NaN, batch32: Number.NaN, learntFullBatch: Number.NaN },
      };
    }
    const costs = (await (await fetch(`${server.url}/costs`, { method: 'POST', body: '' })).json()) as Record<
      Workload,
      CallCosts
    >;
    for (const name of Object.keys(WORKLOADS) as Workload[]) results[name].costs = costs[name];
    return {
      ...results,
      maxLatencyMs: MAX_LATENCY_MS,
      layers: LAYERS,
      deepLayers: DEEP_LAYERS,
      onnxLayers: ONNX_LAYERS,
      onnxWidth: ONNX_WIDTH,
      pinning: pinning.description,
    };
  } finally {
    unpin();
    await stopServer(server.child);
  }
}
