import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TaskView } from '@tiffin/core/tasks';
import { expect, it } from 'vitest';
import { sleep } from '../../core/test/server/helpers.js';
import { RedisTaskStore } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Resolves with the id the child prints as `claimed <id>`. */
function claimed(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /claimed (\S+)\n/.exec(out);
      if (match) resolve(match[1] as string);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`the replica exited (${code}) before it claimed: ${err}`)));
  });
}

describeOnRedis('a replica killed while it runs a task, on a real redis-server', (redis) => {
  it('stops being reported running within a few lease periods of its SIGKILL, by the replicas left (default lease)', async () => {
    const queue = 'lease';
    // The replica that is left: it did not claim the task and runs no runner, so it only reads the task's state.
    const store = await RedisTaskStore.open({ url: redis.url, queue });
    const child = spawn(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        join(here, 'fixtures', 'claim-and-hold.ts'),
        redis.url,
        queue,
      ],
      { cwd: join(here, '..'), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const { id } = await store.submit(
        'api',
        { method: 'POST', url: '/api/submit', headers: [], body: Buffer.from('{}') },
        { attempts: 2 },
      );
      expect(await claimed(child)).toBe(id);
      const running = await store.status(id);
      expect(running).toMatchObject({ status: 'running', step: 16, total_steps: 100 });
      // A client following the task's events on the replica that is left.
      const follow = new AbortController();
      const heard: string[] = [];
      const following = (async () => {
        for await (const { event } of store.events(id, follow.signal)) heard.push(event);
      })();
      child.kill('SIGKILL');
      await exited;
      // Four periods of the default lease (5 s) at most: the task is then no longer said to run. (With the
      // 30 s lease of before, it was still "running, step 16" with a moving ETA all that while.)
      let view: TaskView = running;
      const end = Date.now() + 20_000;
      while (view.status === 'running' && Date.now() < end) {
        await sleep(250);
        view = await store.status(id);
      }
      // Queued again (it has an attempt left), at the head of the queue; nothing claims it here.
      expect(view).toMatchObject({ id, status: 'queued', step: 0, queue_position: 1 });
      // Its follower hears it too, once BullMQ's stalled-job check has put it back (within as long again).
      const heardBy = Date.now() + 20_000;
      while (!heard.includes('queued') && Date.now() < heardBy) await sleep(100);
      follow.abort();
      await following;
      expect(heard).toEqual(['step', 'queued']);
    } finally {
      child.kill('SIGKILL');
      await store.close();
    }
  }, 60_000);
});
