import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { describeOnRedis } from '../../tasks-redis/test/describe-on-redis.js';
import { CLI_DIR, CliProcess } from './cli-process.js';

const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'slow-tasks.ts');

const running: CliProcess[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
});

interface View {
  status: string;
  error: { code: string } | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnRedis('tiffin serve --tasks redis:// on a real redis-server', (redis) => {
  const ready = async (p: CliProcess) =>
    String((await p.waitFor((r) => r.msg === 'ready', 1, 90_000))[0]?.url);
  const serve = (db: number, extra: string[] = []) => {
    const p = new CliProcess([
      'serve',
      FIXTURE,
      '--port',
      '0',
      '--tasks',
      `redis://127.0.0.1:${redis.port}/${db}`,
      ...extra,
    ]);
    running.push(p);
    return p;
  };
  // A dead replica's tasks are taken up after 1 s, not the default 30 s.
  process.env.TIFFIN_TASKS_LEASE_MS = '1000';

  async function submit(url: string, n: number, ms: number): Promise<Response> {
    return fetch(`${url}/work/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n, ms }),
    });
  }
  const view = async (url: string, id: string) =>
    (await (await fetch(`${url}/work/status?id=${id}`)).json()) as View;
  async function allFinal(url: string, ids: string[]): Promise<View[]> {
    for (;;) {
      const views = await Promise.all(ids.map((id) => view(url, id)));
      if (views.every((v) => v.status === 'succeeded' || v.status === 'failed')) return views;
      await sleep(100);
    }
  }
  /** Each task's runs that ended as the process logged them ("task ended"), over the given processes. */
  function ends(processes: CliProcess[]): Map<string, string[]> {
    const byTask = new Map<string, string[]>();
    for (const p of processes)
      for (const r of p.records())
        if (r.msg === 'task ended')
          byTask.set(String(r.taskId), [...(byTask.get(String(r.taskId)) ?? []), String(r.status)]);
    return byTask;
  }

  it('two replicas, one killed -9 midway: every task succeeds once, from either replica', async () => {
    const a = serve(1);
    const b = serve(1);
    const [urlA, urlB] = await Promise.all([ready(a), ready(b)]);
    const ids: string[] = [];
    for (let n = 0; n < 60; n++) {
      const res = await submit(n % 2 ? urlA : urlB, n, 200);
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    // Both replicas answer the same status for the same task.
    for (const id of ids.slice(0, 5))
      expect((await view(urlA, id)).status).toBe((await view(urlB, id)).status);
    for (;;) {
      const done = (await Promise.all(ids.map((id) => view(urlB, id)))).filter(
        (v) => v.status === 'succeeded',
      );
      if (done.length >= 15) break;
      await sleep(50);
    }
    const runningOnA = [...ends([a]).keys()].length;
    a.kill('SIGKILL');
    await a.exited;
    const views = await allFinal(urlB, ids);
    const runs = ends([a, b]);
    const retried = ids.filter((id) =>
      b.records().some((r) => r.msg === 'task ended' && r.taskId === id && Number(r.attempt) > 1),
    ).length;
    const figures = {
      submitted: ids.length,
      succeeded: views.filter((v) => v.status === 'succeeded').length,
      retried,
      failed: views.filter((v) => v.status === 'failed').length,
      lost: ids.length - views.length,
      endedOnAbeforeKill: runningOnA,
    };
    console.log(`redis two replicas, kill -9: ${JSON.stringify(figures)}`);
    expect(figures.succeeded).toBe(ids.length);
    for (const [n, id] of ids.entries()) {
      const res = await fetch(`${urlB}/work/get?id=${id}`);
      expect(await res.json()).toMatchObject({ n, task: id });
      // Succeeded once: no task has two successful runs.
      expect((runs.get(id) ?? []).filter((s) => s === 'succeeded').length).toBeLessThanOrEqual(1);
    }
  }, 180_000);

  it('--workers 2 serves task APIs on Redis', async () => {
    const p = serve(2, ['--workers', '2']);
    const url = await ready(p);
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) ids.push(((await (await submit(url, n, 50)).json()) as { id: string }).id);
    const views = await allFinal(url, ids);
    expect(views.every((v) => v.status === 'succeeded')).toBe(true);
  }, 60_000);

  it('Redis stopped under a trickle of submits: 503 with Retry-After while it is away, no 202 lost', async () => {
    const p = serve(3);
    const url = await ready(p);
    const accepted: string[] = [];
    let refused = 0;
    let retryAfter = true;
    let notReady = false;
    const trickle = async (ms: number) => {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        const res = await submit(url, accepted.length, 20);
        if (res.status === 202) accepted.push(((await res.json()) as { id: string }).id);
        else {
          expect(res.status).toBe(503);
          expect(((await res.json()) as { code: string }).code).toMatch(
            /TASK_STORE_UNAVAILABLE|SERVICE_UNAVAILABLE/,
          );
          retryAfter &&= res.headers.get('retry-after') !== null;
          refused++;
        }
        await sleep(100);
      }
    };
    await trickle(1000);
    await redis.pause();
    const away = trickle(3000);
    await sleep(1000);
    notReady = (await fetch(`${url}/readyz`)).status === 503;
    await away;
    await redis.resume();
    await trickle(1000);
    const views = await allFinal(url, accepted);
    const figures = {
      submitted: accepted.length + refused,
      accepted: accepted.length,
      refused503: refused,
      succeeded: views.filter((v) => v.status === 'succeeded').length,
      failed: views.filter((v) => v.status === 'failed').length,
      lost: accepted.length - views.length,
    };
    console.log(`redis outage (3 s): ${JSON.stringify(figures)}`);
    expect(refused).toBeGreaterThan(0);
    expect(retryAfter).toBe(true);
    expect(notReady).toBe(true);
    expect(figures.succeeded).toBe(accepted.length);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  }, 120_000);
});
