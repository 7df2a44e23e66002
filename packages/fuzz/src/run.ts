import fc from 'fast-check';
import { grpcCase } from './grpc-cases.js';
import { rawGrpcClient } from './grpc-raw.js';
import { fuzzRequest } from './requests.js';
import { encodeRequest, type Outcome, send } from './send.js';
import type { Target } from './target.js';

export interface FuzzOptions {
  /** Requests to send in all (HTTP and gRPC). */
  requests: number;
  /** Stop early after this many seconds (default: no limit). */
  durationS?: number;
  seed: number;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Share of the requests sent as gRPC `Call`s (default 0.1). */
  grpcShare?: number;
  /** A request unanswered for this long is a hang (default 5000 ms). */
  hangMs?: number;
}

/** A request that got a 5xx, INTERNAL/UNKNOWN, or no answer in time: what was sent, in short. */
export interface Finding {
  what: string;
  outcome: string;
}

export interface FuzzReport {
  sent: number;
  /** HTTP outcomes: status code, `closed` (no answer before the connection closed) or `hang`. */
  http: Record<string, number>;
  /** gRPC status codes by name. */
  grpc: Record<string, number>;
  /** Body kinds sent, for coverage. */
  kinds: Record<string, number>;
  findings: Finding[];
  slowestMs: number;
  seconds: number;
}

const GRPC_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

const BATCH = 200;

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** A server failure for the fuzzer: any 5xx, gRPC INTERNAL/UNKNOWN/UNAVAILABLE, or a hang. */
export function isFailure(outcome: Outcome | string): boolean {
  if (typeof outcome === 'number') return outcome >= 500;
  return outcome === 'hang' || outcome === 'INTERNAL' || outcome === 'UNKNOWN' || outcome === 'UNAVAILABLE';
}

/** Send `options.requests` generated hostile requests (seeded, reproducible) at `target`. */
export async function fuzz(target: Target, options: FuzzOptions): Promise<FuzzReport> {
  const concurrency = options.concurrency ?? 8;
  const grpcShare = options.grpcShare ?? 0.1;
  const hangMs = options.hangMs ?? 5000;
  const deadline = options.durationS ? Date.now() + options.durationS * 1000 : Number.POSITIVE_INFINITY;
  const report: FuzzReport = {
    sent: 0,
    http: {},
    grpc: {},
    kinds: {},
    findings: [],
    slowestMs: 0,
    seconds: 0,
  };
  const client = rawGrpcClient(target.grpcAddress);
  const started = performance.now();
  try {
    for (let batch = 0; report.sent < options.requests && Date.now() < deadline; batch++) {
      const n = Math.min(BATCH, options.requests - report.sent);
      const grpcN = Math.round(n * grpcShare);
      // One seed per batch: any case can be regenerated from (seed, batch) without keeping them all.
      const httpCases = fc.sample(fuzzRequest, { seed: options.seed + batch, numRuns: n - grpcN });
      const grpcCases = grpcN > 0 ? fc.sample(grpcCase, { seed: options.seed + batch, numRuns: grpcN }) : [];
      const jobs: Array<() => Promise<void>> = [
        ...httpCases.map((req) => async () => {
          const { outcome, ms } = await send(target.httpPort, encodeRequest(req, '127.0.0.1'), hangMs);
          bump(report.http, String(outcome));
          bump(report.kinds, req.payload.kind);
          report.slowestMs = Math.max(report.slowestMs, ms);
          if (isFailure(outcome)) {
            report.findings.push({
              what: `seed ${options.seed + batch}: ${req.method} ${req.path.slice(0, 60)} ${req.payload.kind} ${req.framing} type=${String(req.payload.contentType).slice(0, 60)} ${req.payload.body.length} B`,
              outcome: String(outcome),
            });
          }
        }),
        ...grpcCases.map((c) => async () => {
          const t0 = performance.now();
          const { code, details } = await client.call(c.bytes, {}, c.method);
          const name = GRPC_NAMES[code] ?? String(code);
          bump(report.grpc, name);
          bump(report.kinds, c.kind);
          report.slowestMs = Math.max(report.slowestMs, performance.now() - t0);
          if (isFailure(name)) {
            report.findings.push({
              what: `seed ${options.seed + batch}: ${c.kind} ${c.bytes.subarray(0, 40).toString('hex')}`,
              outcome: `${name} ${details.slice(0, 120)}`,
            });
          }
        }),
      ];
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) await jobs[next++]!();
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      report.sent += jobs.length;
      if (target.exit) break;
    }
  } finally {
    client.close();
    report.seconds = (performance.now() - started) / 1000;
  }
  return report;
}
