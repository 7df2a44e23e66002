/**
 * Two comparisons, measured in one run on loopback (client and server in this process):
 * 1. Open Inference Protocol `infer` with the binary tensor extension against the native NumpyNdarray JSON
 *    route, for a 100k-float32 tensor echoed by the same API (calls/s).
 * 2. `@tiffin/client` against a bare `fetch` doing the same call (a 4-float NumpyNdarray API), calls/s.
 * Each variant runs `runs` times, alternating, `seconds` each with `concurrency` calls in flight; the
 * ratio is of the medians. No thresholds: the figures are printed.
 */
import { loadavg } from 'node:os';
import { createClient } from '@tiffin/client';
import { NumpyNdarray, Service, serve, silentLogger } from '@tiffin/core';

export interface Stats {
  min: number;
  median: number;
  max: number;
}

export interface ClientsBenchResult {
  v2Binary: Stats;
  nativeJson: Stats;
  client: Stats;
  bareFetch: Stats;
  loadBefore: number[];
  loadAfter: number[];
  tensorSize: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]!, max: sorted[sorted.length - 1]! };
}

/** Calls/s of `call` with `concurrency` loops for `seconds`. */
async function rate(call: () => Promise<void>, seconds: number, concurrency: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await call();
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - start) / 1000);
}

/** Alternates the variants `runs` times; returns each variant's calls/s over the runs. */
async function alternate(
  variants: Array<() => Promise<void>>,
  runs: number,
  seconds: number,
  concurrency: number,
): Promise<Stats[]> {
  const results: number[][] = variants.map(() => []);
  for (const v of variants) await rate(v, Math.min(1, seconds), concurrency); // warm-up
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < variants.length; i++)
      results[i]!.push(await rate(variants[i]!, seconds, concurrency));
  }
  return results.map(stats);
}

export async function benchClients({
  seconds = 3,
  runs = 3,
  tensorSize = 100_000,
} = {}): Promise<ClientsBenchResult> {
  const svc = new Service('bench-clients')
    .api(
      {
        name: 'echo',
        input: new NumpyNdarray({ dtype: 'float32' }),
        output: new NumpyNdarray({ dtype: 'float32' }),
      },
      (x) => x,
    )
    .api(
      {
        name: 'small',
        input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 4] }),
        output: new NumpyNdarray(),
      },
      (x) => x,
    );
  const server = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
  const loadBefore = loadavg();
  try {
    const values = Float32Array.from({ length: tensorSize }, (_, i) => Math.sin(i));
    const jsonBody = JSON.stringify(Array.from(values));
    const header = Buffer.from(
      JSON.stringify({
        inputs: [
          {
            name: 'input',
            shape: [tensorSize],
            datatype: 'FP32',
            parameters: { binary_data_size: values.byteLength },
          },
        ],
        parameters: { binary_data_output: true },
      }),
    );
    const binaryBody = Buffer.concat([header, Buffer.from(values.buffer)]);
    const native = async () => {
      const res = await fetch(`${server.url}/echo`, {
        method: 'POST',
        body: jsonBody,
        headers: { 'content-type': 'application/json' },
      });
      const out = new Float32Array((await res.json()) as number[]);
      if (out.length !== tensorSize) throw new Error('native: wrong length');
    };
    const v2 = async () => {
      const res = await fetch(`${server.url}/v2/models/echo/infer`, {
        method: 'POST',
        body: binaryBody,
        headers: {
          'content-type': 'application/octet-stream',
          'inference-header-content-length': String(header.length),
        },
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      const n = Number(res.headers.get('inference-header-content-length'));
      const out = new Float32Array(bytes.slice(n).buffer);
      if (out.length !== tensorSize) throw new Error('v2: wrong length');
    };
    const [v2Binary, nativeJson] = await alternate([v2, native], runs, seconds, 4);

    const rows = [[5.1, 3.5, 1.4, 0.2]];
    const client = createClient<typeof svc>({ baseUrl: server.url });
    const viaClient = async () => {
      const out = await client.small(rows);
      if (!Array.isArray(out)) throw new Error('client: wrong answer');
    };
    const viaFetch = async () => {
      const res = await fetch(`${server.url}/small`, {
        method: 'POST',
        body: JSON.stringify(rows),
        headers: { 'content-type': 'application/json' },
      });
      if (!res.ok) throw new Error(`fetch: ${res.status}`);
      const out = await res.json();
      if (!Array.isArray(out)) throw new Error('fetch: wrong answer');
    };
    const [viaClientStats, bareFetch] = await alternate([viaClient, viaFetch], runs, seconds, 8);
    return {
      v2Binary,
      nativeJson,
      client: viaClientStats,
      bareFetch,
      loadBefore,
      loadAfter: loadavg(),
      tensorSize,
    };
  } finally {
    await server.close();
  }
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const line = (s: Stats) => `min ${fmt(s.min)}  median ${fmt(s.median)}  max ${fmt(s.max)}`;

/** Prints the comparison (used by run.ts and when this file is run alone). */
export function printClients(r: ClientsBenchResult): void {
  console.log(
    `\nOpen Inference Protocol vs native, ${fmt(r.tensorSize)}-float32 echo, 4 in flight, calls/s:`,
  );
  console.log(`  v2 infer, binary tensors      ${line(r.v2Binary)}`);
  console.log(`  native NumpyNdarray JSON      ${line(r.nativeJson)}`);
  console.log(
    `  ratio v2/native (medians)     ${fmt(r.v2Binary.median / r.nativeJson.median, 2)}x   (target >= 1.5x)`,
  );
  console.log('@tiffin/client vs bare fetch, 4-float NumpyNdarray API, 8 in flight, calls/s:');
  console.log(`  @tiffin/client                ${line(r.client)}`);
  console.log(`  bare fetch                    ${line(r.bareFetch)}`);
  console.log(
    `  ratio client/fetch (medians)  ${fmt(r.client.median / r.bareFetch.median, 3)}x   (target >= 0.95x)`,
  );
  console.log(
    `  load average before ${r.loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${r.loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printClients(await benchClients({ seconds: Number(process.env.BENCH_SECONDS ?? 3) }));
}
