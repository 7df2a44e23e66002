import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDense } from '../../onnx/test/fixtures/test-models.js';
import { ModelServers } from './model-servers.js';

/**
 * Heavy unbatched calls to a zero-code model that time out (504): their queued runs are dropped once their
 * callers are gone, so the next caller is answered, `/livez` answers, memory stays bounded, and the 504s are
 * counted on `/metrics`.
 */

const servers = new ModelServers();
beforeAll(() => servers.open('tiffin-serve-timeouts-'));
afterAll(() => servers.close());

/** Resident memory of a process in bytes (Linux), undefined elsewhere. */
async function rss(pid: number | undefined): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

describe('tiffin serve model.onnx --timeout with heavy unbatched calls', () => {
  it('16 calls that time out leave the runner free for the next caller; /livez answers; RSS bounded', async () => {
    const url = await servers.serve([
      writeDense(servers.dir, 1024),
      '--no-batching',
      '--threads',
      '1',
      '--timeout',
      '1',
    ]);
    const pid = servers.processes.at(-1)!.child.pid;
    const row = (n: number) =>
      JSON.stringify(Array.from({ length: n }, () => Array.from({ length: 1024 }, (_, i) => (i % 7) / 7)));
    const light = row(1);
    expect((await fetch(`${url}/predict`, { method: 'POST', body: light })).status).toBe(200);
    const before = await rss(pid);

    // Each heavy call is some hundreds of ms on one thread: 16 queued behind each other pass the 1 s deadline.
    const heavy = row(512);
    let timedOut = 0;
    const burst = async () => {
      const statuses = await Promise.all(
        Array.from({ length: 16 }, () =>
          fetch(`${url}/predict`, { method: 'POST', body: heavy }).then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          }),
        ),
      );
      const late = statuses.filter((s) => s === 504).length;
      expect(late).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 200 || s === 504)).toBe(true);
      timedOut += late;
      // Had the timed-out runs stayed queued, this call would wait behind them past its own deadline.
      const live = await fetch(`${url}/livez`);
      expect(live.status).toBe(200);
      const next = await fetch(`${url}/predict`, { method: 'POST', body: light });
      expect(next.status).toBe(200);
      return rss(pid);
    };
    // Four bursts: once the heap has grown to what 16 bodies of 4 MB in flight need (their JSON, arrays and
    // tensors), the later bursts find that room again. A timed-out call whose body still waited for a JSON thread
    // once stayed queued there, holding its bytes, and each burst added about 200 MiB (1.3 GiB after four).
    const sizes: Array<number | undefined> = [];
    for (let i = 0; i < 4; i++) sizes.push(await burst());
    const [first, last] = [sizes[0], sizes.at(-1)];
    if (before !== undefined && first !== undefined && last !== undefined) {
      expect(last - before).toBeLessThan(1024 * 2 ** 20);
      // Measured 100–150 MiB over the three later bursts; 540 MiB when the queued bodies were kept.
      expect(last - first).toBeLessThan(320 * 2 ** 20);
    }

    const metrics = await (await fetch(`${url}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith('tiffin_api_server_shed_total{') && l.includes('code="DEADLINE_EXCEEDED"'));
    expect(Number(line?.slice(line.lastIndexOf(' ') + 1))).toBe(timedOut);
  }, 120_000);

  it("calls past the runner queue's bound are refused 503 RUNNER_QUEUE_FULL and counted in shed_total", async () => {
    // The gate lets more calls in than the runner queue holds (128), so the queue's own bound answers.
    const url = await servers.serve([
      writeDense(servers.dir, 1024),
      '--no-batching',
      '--threads',
      '1',
      '--max-concurrency',
      '1000',
    ]);
    const rows = (n: number) =>
      JSON.stringify(Array.from({ length: n }, () => Array.from({ length: 1024 }, (_, i) => (i % 5) / 5)));
    const heavy = rows(512);
    const light = rows(1);
    const call = (body: string) =>
      fetch(`${url}/predict`, { method: 'POST', body }).then(async (r) => ({
        status: r.status,
        code: r.status === 200 ? undefined : ((await r.json()) as { code: string }).code,
      }));
    // Heavy calls hold the one runner thread (hundreds of ms each) while 400 light ones arrive behind them: the
    // queue overflows however fast the light ones are decoded. Rounds repeat (at most 5) until one is refused, so a
    // loaded machine that delivers the light calls slowly still gets there.
    const answers: Array<{ status: number; code: string | undefined }> = [];
    for (let round = 0; round < 5 && !answers.some((a) => a.status === 503); round++) {
      const sent = [...Array.from({ length: 4 }, () => heavy), ...Array.from({ length: 400 }, () => light)];
      answers.push(...(await Promise.all(sent.map(call))));
    }
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((a) => a.code))).toEqual(new Set(['RUNNER_QUEUE_FULL']));
    expect(answers.every((a) => a.status === 200 || a.status === 503)).toBe(true);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith('tiffin_api_server_shed_total{') && l.includes('code="RUNNER_QUEUE_FULL"'));
    expect(Number(line?.slice(line.lastIndexOf(' ') + 1))).toBe(refused.length);
  }, 120_000);
});
