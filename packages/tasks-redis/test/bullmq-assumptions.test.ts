import { Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import {
  BULLMQ_PREFIX,
  claimableJobKeys,
  eventsStreamKey,
  JOB_FIELDS,
  jobKey,
  jobKeyPrefix,
  lockKey,
  nextJobOf,
  unfinishedJobKeys,
  VIEW_FIELDS,
  WAIT_LIST_ORDER,
  waitAndActiveKeys,
} from '../src/bullmq-assumptions.js';
import { describeOnRedis } from './describe-on-redis.js';

// What the store assumes of BullMQ beyond its public API (`src/bullmq-assumptions.ts`), checked on real BullMQ: a
// Queue and a Worker (as the store makes them: the store's prefix, claims by hand) on a real redis-server. A BullMQ
// upgrade that renames a key or a field, changes a key's type or the wait list's order fails here.

/** A stream entry's fields as an object. */
const fieldsOf = (flat: string[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (let k = 0; k + 1 < flat.length; k += 2) out[flat[k] as string] = flat[k + 1] as string;
  return out;
};

describeOnRedis('what the store assumes of BullMQ, on a real redis-server', (redis) => {
  let n = 0;
  const opened: Array<{ close(): Promise<unknown> }> = [];
  const connections: Redis[] = [];
  afterEach(async () => {
    for (const closing of opened.splice(0)) await closing.close();
    for (const connection of connections.splice(0)) connection.disconnect();
  });
  const connect = () => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    connections.push(connection);
    return connection;
  };
  /** A queue and a worker that claims by hand, with the store's prefix and stall settings. */
  const queueAndWorker = (lockDuration = 30_000) => {
    const name = `assumed-${n++}`;
    const queue = new Queue(name, { connection: connect(), prefix: BULLMQ_PREFIX });
    const worker = new Worker(name, null, {
      connection: connect(),
      prefix: BULLMQ_PREFIX,
      autorun: false,
      lockDuration,
      stalledInterval: 500,
      maxStalledCount: 1_000_000,
    });
    opened.push(queue, { close: () => worker.close(true) });
    return { queue, worker, probe: connect() };
  };

  it("names a job's hash, its fields and lock, and the wait and active lists as BullMQ writes them", async () => {
    const { queue, worker, probe } = queueAndWorker();
    const before = Date.now();
    for (const id of ['a', 'b', 'c']) await queue.add('api', { n: id }, { jobId: id });
    const [wait, active] = waitAndActiveKeys(queue);
    expect(queue.keys.wait).toBe(`${BULLMQ_PREFIX}:${queue.name}:wait`);
    expect(await probe.type(wait)).toBe('list');
    // Added at the head: the newest first.
    expect(WAIT_LIST_ORDER.addedAt).toBe('head');
    expect(await probe.lrange(wait, 0, -1)).toEqual(['c', 'b', 'a']);

    const a = jobKey(queue, 'a');
    expect(a).toBe(`${jobKeyPrefix(queue)}a`);
    expect(await probe.type(a)).toBe('hash');
    const added = await probe.hgetall(a);
    expect(added[JOB_FIELDS.name]).toBe('api');
    expect(JSON.parse(added[JOB_FIELDS.data] ?? 'null')).toEqual({ n: 'a' });
    expect(Number(added[JOB_FIELDS.timestamp])).toBeGreaterThanOrEqual(before);
    for (const field of [JOB_FIELDS.processedOn, JOB_FIELDS.finishedOn, JOB_FIELDS.returnvalue])
      expect(added[field]).toBeUndefined();

    // Claimed from the tail: the oldest first, into the active list, under a lock holding the claim's token.
    expect(WAIT_LIST_ORDER.claimedFrom).toBe('tail');
    const job = (await worker.getNextJob('token-1', { block: false })) as Job;
    expect(job.id).toBe('a');
    expect(await probe.type(active)).toBe('list');
    expect(await probe.lpos(active, 'a')).not.toBeNull();
    expect(await probe.lpos(wait, 'a')).toBeNull();
    expect(await probe.get(lockKey(a))).toBe('token-1');
    const claimed = await probe.hgetall(a);
    expect(claimed[JOB_FIELDS.attemptsStarted]).toBe('1');
    expect(job.attemptsStarted).toBe(1);
    expect(Number(claimed[JOB_FIELDS.processedOn])).toBeGreaterThanOrEqual(before);

    await job.updateProgress({ step: 1, total_steps: 4 });
    expect(JSON.parse((await probe.hget(a, JOB_FIELDS.progress)) ?? 'null')).toEqual({
      step: 1,
      total_steps: 4,
    });

    // Completed: its return value as JSON, its end's time, out of the active list, its lock gone; the next job
    // handed over in the same reply, under the same token.
    const next = nextJobOf(await job.moveToCompleted({ status: 200 }, 'token-1', true));
    expect(next?.id).toBe('b');
    const b = Job.fromJSON(worker, next?.fields as never, next?.id);
    expect(b.data).toEqual({ n: 'b' });
    expect(await probe.get(lockKey(jobKey(queue, 'b')))).toBe('token-1');
    expect(JSON.parse((await probe.hget(a, JOB_FIELDS.returnvalue)) ?? 'null')).toEqual({ status: 200 });
    expect(Number(await probe.hget(a, JOB_FIELDS.finishedOn))).toBeGreaterThanOrEqual(before);
    expect(await probe.lpos(active, 'a')).toBeNull();
    expect(await probe.exists(lockKey(a))).toBe(0);
    // A completed job has every field the view reads but the reason of a failure.
    const finished = await probe.hgetall(a);
    for (const field of VIEW_FIELDS)
      if (field !== JOB_FIELDS.failedReason) expect(finished).toHaveProperty(field);

    // Failed: the error's message kept verbatim as its reason.
    const reason = 'tiffin-ending:{"status":"failed","error":{"code":"X"}}';
    await b.moveToFailed(new Error(reason), 'token-1', false);
    expect(await probe.hget(jobKey(queue, 'b'), JOB_FIELDS.failedReason)).toBe(reason);
    expect(Number(await probe.hget(jobKey(queue, 'b'), JOB_FIELDS.finishedOn))).toBeGreaterThanOrEqual(
      before,
    );

    // The last one: completing it hands nothing over.
    const c = (await worker.getNextJob('token-2', { block: false })) as Job;
    expect(nextJobOf(await c.moveToCompleted({ status: 200 }, 'token-2', true))).toBeUndefined();
  });

  it('keeps its events in a stream whose ids are its clock in ms, a completed entry carrying the return value', async () => {
    const { queue, worker, probe } = queueAndWorker();
    const before = Date.now();
    await queue.add('api', {}, { jobId: 'e' });
    const job = (await worker.getNextJob('token', { block: false })) as Job;
    await job.moveToCompleted({ status: 201 }, 'token', false);
    const after = Date.now();
    const stream = eventsStreamKey(queue);
    expect(await probe.type(stream)).toBe('stream');
    const entries = await probe.xrange(stream, '-', '+');
    expect(entries.length).toBeGreaterThan(0);
    for (const [id] of entries) {
      const ms = Number(id.split('-')[0]);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(after);
    }
    const completed = entries.map(([, flat]) => fieldsOf(flat)).find((e) => e.event === 'completed');
    expect(completed?.jobId).toBe('e');
    expect(JSON.parse(completed?.returnvalue ?? 'null')).toEqual({ status: 201 });
  });

  it('keeps unfinished jobs in the lists and sorted sets the admission counts, as getJobCounts counts them', async () => {
    const { queue, worker, probe } = queueAndWorker();
    await queue.add('api', {}, { jobId: 'w1' });
    await (worker.getNextJob('token', { block: false }) as Promise<Job>);
    await queue.add('api', {}, { jobId: 'w2' });
    await queue.add('api', {}, { jobId: 'd', delay: 60_000 });
    await queue.add('api', {}, { jobId: 'p', priority: 1 });
    const [wait, paused, active, delayed, prioritized] = unfinishedJobKeys(queue);
    expect(claimableJobKeys(queue)).toEqual([wait, prioritized]);
    const types = async () =>
      Promise.all([wait, paused, active, delayed, prioritized].map((key) => probe.type(key)));
    /** As `admit-10.lua` counts: LLEN of the lists, ZCARD of the sorted sets. */
    const counted = async () =>
      (await probe.llen(wait)) +
      (await probe.llen(paused)) +
      (await probe.llen(active)) +
      (await probe.zcard(delayed)) +
      (await probe.zcard(prioritized));
    const total = async () =>
      Object.values(await queue.getJobCounts('wait', 'paused', 'active', 'delayed', 'prioritized')).reduce(
        (sum, count) => sum + count,
        0,
      );
    expect(await types()).toEqual(['list', 'none', 'list', 'zset', 'zset']);
    expect(await probe.zscore(prioritized, 'p')).not.toBeNull();
    expect(await probe.zscore(delayed, 'd')).not.toBeNull();
    expect([await counted(), await total()]).toEqual([4, 4]);
    // Paused, the waiting jobs are in the paused list.
    await queue.pause();
    expect(await probe.type(paused)).toBe('list');
    expect(await probe.lrange(paused, 0, -1)).toEqual(['w2']);
    expect([await counted(), await total()]).toEqual([4, 4]);
  });

  it('puts a job whose lock lapsed back at the end claims take from, and counts its next claim as started again', async () => {
    const { queue, worker, probe } = queueAndWorker(1000);
    await queue.add('api', {}, { jobId: 'x' });
    await queue.add('api', {}, { jobId: 'y' });
    const job = (await worker.getNextJob('token-1', { block: false })) as Job;
    expect(job.id).toBe('x');
    // Its lock is not renewed (as when its process died): it lapses.
    const lock = lockKey(jobKey(queue, 'x'));
    while ((await probe.exists(lock)) === 1) await new Promise((resolve) => setTimeout(resolve, 100));
    const stalled = new Promise<string>((resolve) => worker.once('stalled', (id: string) => resolve(id)));
    void worker.startStalledCheckTimer();
    expect(await stalled).toBe('x');
    const [wait] = waitAndActiveKeys(queue);
    expect(WAIT_LIST_ORDER.stalledBackAt).toBe('tail');
    expect(await probe.lrange(wait, 0, -1)).toEqual(['y', 'x']);
    const again = (await worker.getNextJob('token-2', { block: false })) as Job;
    expect(again.id).toBe('x');
    expect(again.attemptsStarted).toBe(2);
    expect(await probe.hget(jobKey(queue, 'x'), JOB_FIELDS.attemptsStarted)).toBe('2');
  });
});
