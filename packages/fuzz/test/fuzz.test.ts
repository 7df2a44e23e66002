import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzz } from '../src/run.js';
import { slowClients } from '../src/slow-clients.js';
import { startTarget, type Target } from '../src/target.js';

let target: Target;
beforeAll(async () => {
  target = await startTarget();
}, 60_000);
afterAll(async () => {
  await target?.stop();
});

describe('fuzz: hostile requests at every descriptor and the v2 infer route, HTTP and gRPC', () => {
  it('answers a seeded run of hostile requests without a 5xx, an INTERNAL, a lost request or a crash', async () => {
    // No timing threshold here (the box may be loaded): a hang is a request with no answer in a minute.
    // `pnpm fuzz` reports answers slower than 5 s.
    // Slow clients (unread answers, slow and stalled bodies, partial gRPC messages, unread event streams)
    // hold the server meanwhile.
    const [report, slow] = await Promise.all([
      fuzz(target, { requests: 1500, seed: 13, concurrency: 8, grpcShare: 0.12, hangMs: 60_000 }),
      slowClients(target, { cases: 48, seed: 13, concurrency: 8 }),
    ]);
    expect(target.exit, target.stderr().slice(-2000)).toBeNull();
    // Server errors and inputs a decoder failed on with an error of its own (see src/server.ts).
    expect(target.stderr().slice(0, 4000)).toBe('');
    expect(report.findings, JSON.stringify(report.findings.slice(0, 10), null, 1)).toEqual([]);
    expect(report.sent).toBe(1500);
    expect(slow.findings, JSON.stringify(slow.findings.slice(0, 10), null, 1)).toEqual([]);
    expect(slow.sent).toBe(48);
    for (const shape of ['slow/read', 'slow/body', 'slow/grpc-partial', 'slow/unread-stream']) {
      expect(slow.kinds[shape] ?? 0, shape).toBeGreaterThan(0);
    }
    // Every family of hostile body was sent.
    for (const kind of [
      'json/deep',
      'multipart/truncated',
      'multipart/many-parts',
      'image/bomb',
      'parquet/garbage',
      'parquet/rle-bomb',
      'image/bmp-bomb',
      'csv/cells',
      'grpc/random',
      'v2/json',
      'v2/binary',
      'v2/garbage',
      'grpc-v2/message',
      'grpc-v2/mutated',
    ]) {
      expect(report.kinds[kind] ?? 0, kind).toBeGreaterThan(0);
    }
    const live = await fetch(`http://127.0.0.1:${target.httpPort}/livez`);
    expect(live.status).toBe(200);
  });
});
