import { randomUUID } from 'node:crypto';
import type { TaskRequest, TaskResult } from '@tiffin/core/tasks';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { RedisTaskStore, type RedisTaskStoreOptions } from '../src/index.js';
import { describeOnRedis } from './describe-on-redis.js';

/** Bytes counted for a task beyond its request and answer, as every store counts them. */
const OVERHEAD = 1024;

const submitted = (bytes: number): TaskRequest => ({
  method: 'POST',
  url: '/api/submit',
  headers: [['content-type', 'application/octet-stream']],
  body: Buffer.alloc(bytes, 7),
});
const answer = (bytes: number): TaskResult => ({
  status: 200,
  headers: [['content-type', 'application/octet-stream']],
  body: Buffer.alloc(bytes, 9),
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnRedis('the bytes tasks hold on a real redis-server', (redis) => {
  let n = 0;
  const opened: RedisTaskStore[] = [];
  const probes: Redis[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const probe of probes.splice(0)) probe.disconnect();
  });
  /** Two stores on one queue, as two replicas of a service on one Redis. */
  const replicas = async (options: Partial<RedisTaskStoreOptions>) => {
    const queue = `held-${n++}`;
    const open = () => RedisTaskStore.open({ url: redis.url, queue, leaseMs: 1000, ...options });
    const stores = [await open(), await open()] as const;
    opened.push(...stores);
    const probe = new Redis(redis.url);
    probes.push(probe);
    return { stores, queue, probe };
  };
  /** Bytes in Redis under the queue's keys (`MEMORY USAGE` of each, every element counted). */
  const queueBytes = async (probe: Redis, queue: string): Promise<number> => {
    let total = 0;
    for (const key of await probe.keys(`tiffin:${queue}:*`))
      total += Number((await probe.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    return total;
  };
  /** Claim on either store until the task `id` is claimed; finish it with `result`. */
  const run = async (stores: readonly RedisTaskStore[], result: TaskResult) => {
    for (const store of stores) {
      const task = await store.claim();
      if (task) {
        await store.complete(task.id, result);
        return task.id;
      }
    }
    throw new Error('no task to claim');
  };

  it('bounds the bytes held over two replicas (503 JOBS_FULL), and gives a body back when its task ends', async () => {
    const body = 20_000;
    // Room for two bodies and the three small tasks' answers, not for a third body.
    const { stores, queue, probe } = await replicas({ maxHeldBytes: 2 * (body + OVERHEAD) + 4000 });
    const [a, b] = stores;
    await a.submit('api', submitted(body));
    await b.submit('api', submitted(body));
    // Neither replica takes a third: the two bodies fill the bound they share.
    for (const store of stores)
      await expect(store.submit('api', submitted(body))).rejects.toMatchObject({
        code: 'JOBS_FULL',
        httpStatus: 503,
      });
    // A small one still fits beside them.
    const small = await a.submit('api', submitted(10));
    await run(stores, answer(10));
    await run(stores, answer(10));
    await run(stores, answer(10));
    expect((await b.status(small.id)).status).toBe('succeeded');
    // The ended tasks' bodies are gone from Redis: less is left than one body.
    expect(await queueBytes(probe, queue)).toBeLessThan(body);
    // And their bytes are free again, on either replica.
    await b.submit('api', submitted(body));
    await a.submit('api', submitted(body));
  });

  it('counts answers while they are kept, refuses one that does not fit (507), frees them when they expire', async () => {
    const size = 20_000;
    // Room for two answers and one task's overhead.
    const { stores } = await replicas({ maxHeldBytes: 2 * (size + OVERHEAD) + 1500, resultTtl: 1 });
    const [a, b] = stores;
    const first = await a.submit('api', submitted(0));
    await b.submit('api', submitted(0));
    await run(stores, answer(size));
    await run(stores, answer(size));
    // Two kept answers fill the bound: a third body does not fit, on either replica.
    for (const store of stores)
      await expect(store.submit('api', submitted(size))).rejects.toMatchObject({ code: 'JOBS_FULL' });
    // A task whose answer does not fit beside the kept ones fails; the kept answer is still served.
    const third = await b.submit('api', submitted(0));
    await run(stores, answer(size));
    expect((await a.status(third.id)).error?.code).toBe('TASK_RESULT_TOO_LARGE');
    expect((await b.result(first.id)).body).toEqual(answer(size).body);
    // Past their time to live the answers' bytes are free again.
    await sleep(1300);
    await expect(a.status(first.id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
    await b.submit('api', submitted(size));
  });

  it("counts a small answer written in its job in its body's place, serves it, and frees it when it expires", async () => {
    const { stores, queue, probe } = await replicas({ resultTtl: 1 });
    const [a, b] = stores;
    const { id } = await a.submit('api', submitted(100));
    const held = `tiffin:${queue}:held`;
    expect(Number(await probe.hget(held, id))).toBe(100 + OVERHEAD);
    await run(stores, answer(40));
    // In the job (no key of its own), counted as its bytes and the overhead, until its time to live.
    expect(await probe.exists(`tiffin:${queue}:answer:${id}`, `tiffin:${queue}:body:${id}`)).toBe(0);
    expect(Number(await probe.hget(held, id))).toBe(40 + OVERHEAD);
    expect(Number(await probe.get(`${held}:total`))).toBe(40 + OVERHEAD);
    expect((await b.result(id)).body).toEqual(answer(40).body);
    await sleep(1300);
    // The next count's change purges it.
    await b.submit('api', submitted(0));
    expect(await probe.hget(held, id)).toBeNull();
    expect(Number(await probe.get(`${held}:total`))).toBe(OVERHEAD);
  });

  it("keeps no answer in BullMQ's events stream, and trims the stream by age", async () => {
    const size = 100_000;
    const { stores, queue, probe } = await replicas({ resultTtl: 1 });
    const ids: string[] = [];
    for (let k = 0; k < 5; k++) {
      ids.push((await stores[k % 2].submit('api', submitted(0))).id);
      await run(stores, answer(size));
    }
    for (const id of ids) expect((await stores[0].result(id)).body.byteLength).toBe(size);
    const events = `tiffin:${queue}:events`;
    // Five answers of 100 kB ended: the stream holds less than one.
    expect(Number(await probe.call('MEMORY', 'USAGE', events, 'SAMPLES', '0'))).toBeLessThan(size);
    // Entries older than the time to live go as the next task ends.
    await sleep(1500);
    const since = Date.now() - 1000;
    await stores[1].submit('api', submitted(0));
    await run(stores, answer(10));
    const entries = await probe.xrange(events, '-', '+');
    const oldest = Number(entries[0]?.[0].split('-')[0]);
    expect(oldest).toBeGreaterThanOrEqual(since - 20);
  });

  it('still serves a task queued, and an answer kept, as the store kept them before (in the job, base64)', async () => {
    const { stores, queue, probe } = await replicas({});
    const [a] = stores;
    const bullmq = new Queue(queue, { connection: probe, prefix: 'tiffin' });
    const id = randomUUID();
    try {
      const data = {
        api: 'api',
        method: 'POST',
        url: '/api/submit',
        headers: [['content-type', 'text/plain']],
        body: Buffer.from('old request').toString('base64'),
        attempts: 1,
        client: null,
      };
      await bullmq.add('api', data, { jobId: id, attempts: 1 });
      const task = await a.claim();
      expect(task?.request.body.toString()).toBe('old request');
      await a.complete(id, answer(3));
      expect((await Job.fromId(bullmq, id))?.finishedOn).toBeTruthy();
      // An answer the job kept itself, as BullMQ's return value.
      const legacy = { status: 200, headers: [], body: Buffer.from('old answer').toString('base64') };
      await probe.hset(bullmq.toKey(id), 'returnvalue', JSON.stringify(legacy));
      await probe.del(`tiffin:${queue}:answer:${id}`);
      expect((await a.result(id)).body.toString()).toBe('old answer');
    } finally {
      await bullmq.close();
    }
  });
});
