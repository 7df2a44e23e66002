import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CLI_DIR, CliProcess } from './cli-process.js';

const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'slow-tasks.ts');
const running: CliProcess[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    p.kill('SIGKILL');
    await p.exited;
  }
});
const home = mkdtempSync(join(tmpdir(), 'tiffin-tasks-kill-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function serve(dir: string): CliProcess {
  const p = new CliProcess(['serve', FIXTURE, '--port', '0', '--tasks-dir', dir]);
  running.push(p);
  return p;
}

interface View {
  status: string;
  error: { code: string } | null;
}

async function submit(url: string, api: string, body: unknown): Promise<string> {
  const res = await fetch(`${url}/${api}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}
const view = async (url: string, api: string, id: string) =>
  (await (await fetch(`${url}/${api}/status?id=${id}`)).json()) as View;

describe('the disk task store under kill -9', () => {
  it('loses nothing acknowledged: queued tasks run, running ones are retried per attempts, answers are kept', async () => {
    const dir = join(home, 'tasks');
    const first = serve(dir);
    const url1 = await first.readyUrl();
    // One task that may start once, long enough to be running at the kill; then 20 short ones.
    const once = await submit(url1, 'once', { n: -1, ms: 5000 });
    const work: string[] = [];
    for (let n = 0; n < 20; n++) work.push(await submit(url1, 'work', { n, ms: 200 }));
    // Kill once a few have finished (the others queued or running).
    for (;;) {
      const views = await Promise.all(work.slice(0, 4).map((id) => view(url1, 'work', id)));
      if (views.filter((v) => v.status === 'succeeded').length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const before = await Promise.all(work.map((id) => view(url1, 'work', id)));
    first.kill('SIGKILL');
    await first.exited;

    const second = serve(dir);
    const url2 = await second.readyUrl();
    const final = async () => {
      for (;;) {
        const views = await Promise.all(work.map((id) => view(url2, 'work', id)));
        if (views.every((v) => v.status === 'succeeded' || v.status === 'failed')) return views;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const after = await final();
    const figures = {
      submitted: work.length + 1,
      succeededBeforeKill: before.filter((v) => v.status === 'succeeded').length,
      runningAtKill: before.filter((v) => v.status === 'running').length,
      succeeded: after.filter((v) => v.status === 'succeeded').length,
      failed: after.filter((v) => v.status === 'failed').length,
    };
    console.log(`disk store kill -9: ${JSON.stringify(figures)}`);
    expect(figures.succeeded).toBe(work.length);
    for (const [n, id] of work.entries()) {
      const res = await fetch(`${url2}/work/get?id=${id}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ n, task: id });
    }
    // The task that may start once was running at the kill: it failed with the reason.
    expect(await view(url2, 'once', once)).toMatchObject({
      status: 'failed',
      error: { code: 'TASK_INTERRUPTED' },
    });
  }, 120_000);

  it('--tasks memory keeps them in the process: a restart forgets them', async () => {
    const p = new CliProcess(['serve', FIXTURE, '--port', '0', '--tasks', 'memory']);
    running.push(p);
    const url = await p.readyUrl();
    const id = await submit(url, 'work', { n: 1, ms: 1 });
    expect((await fetch(`${url}/work/status?id=${id}`)).status).toBe(200);
    p.kill('SIGKILL');
    await p.exited;
    const again = new CliProcess(['serve', FIXTURE, '--port', '0', '--tasks', 'memory']);
    running.push(again);
    const url2 = await again.readyUrl();
    expect((await fetch(`${url2}/work/status?id=${id}`)).status).toBe(404);
  }, 60_000);
});
