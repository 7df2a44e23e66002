/**
 * What a task costs beyond its work: a no-op task API served over HTTP, each task submitted (`/submit`) and
 * followed to its end (`/events`), on the memory, disk (LMDB) and Redis stores, against BullMQ's own figure
 * for a bare job on the same Redis (a Queue and a Worker that does nothing, awaited with QueueEvents).
 * Same process for client and server in every case, the same number of tasks in flight and run at once.
 * The `store alone` cases call each store as the task routes and the runner do (submit, claim, complete, the
 * events to the last) with no HTTP and no runner: what the store itself costs, beside BullMQ's own cycle.
 * Rounds alternate the four so that a machine shared with others loads each alike; the ratio to bare
 * BullMQ within a round is the figure to read, with two that the machine's load does not change: the reads
 * redis-server made per task (each one a write a client sent it: a round trip, or several commands sent
 * together) and its CPU time per task. `pnpm --filter @tiffin/tasks-redis bench:tasks`
 * (TASKS=600 ROUNDS=3 IN_FLIGHT=16 CONCURRENCY=8 to change; pinned as the figures in bench/README.md were taken:
 * `REDIS_CPU=0 taskset -c 1 npx -y pnpm@10.34.9 --filter @tiffin/tasks-redis bench:tasks`; PROFILE=1 prints each Redis case's commands and
 * scripts per task, `redis-profile.ts`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { JSONDescriptor, Service, serve, type TaskStore } from '@tiffin/core';
import {
  isFinalEvent,
  LmdbTaskStore,
  MemoryTaskStore,
  type TaskRequest,
  type TaskResult,
} from '@tiffin/core/tasks';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { RedisTaskStore } from '../src/index.js';
import { RedisServer } from '../test/redis-server.js';
import { httpCall } from './http-call.js';
import { profileRedis } from './redis-profile.js';

const TASKS = Number(process.env.TASKS ?? 600);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 16);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const WARMUP = 100;
/** PROFILE=1: each Redis case's commands and scripts per task (`redis-profile.ts`), which slows them. */
const PROFILE = process.env.PROFILE === '1';
const LIMITS = { maxTasks: 4096, maxClientTasks: 4096, resultTtl: 600 };

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU time of this process per task, in µs (what the machine's load does not change much). */
  cpuUs: number;
  /** Per task on Redis: the reads redis-server made (writes sent to it) and its CPU time in µs. */
  redis?: { reads: number; cpuUs: number; inKb: number };
}

/** redis-server's own counters: the reads it made (its INFO `total_reads_processed`) and its CPU seconds. */
async function redisCounters(probe: Redis): Promise<{ reads: number; cpu: number; inBytes: number }> {
  const info = await probe.info();
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return {
    reads: field('total_reads_processed'),
    cpu: field('used_cpu_user') + field('used_cpu_sys'),
    inBytes: field('total_net_input_bytes'),
  };
}

/** `drive` with redis-server's counters read around it (the probe's own reads left out). */
async function driveOnRedis(probe: Redis, count: number, one: () => Promise<void>): Promise<Figures> {
  const profile = PROFILE ? await profileRedis(probe) : null;
  const before = await redisCounters(probe);
  const figures = await drive(count, one);
  const after = await redisCounters(probe);
  if (profile) console.log(await profile.stop(count));
  const reads = (after.reads - before.reads - 1) / count;
  const inKb = (after.inBytes - before.inBytes) / 1024 / count;
  return { ...figures, redis: { reads, cpuUs: ((after.cpu - before.cpu) * 1e6) / count, inKb } };
}

/** Run `count` tasks, `IN_FLIGHT` at a time; each one's time from submit to done. */
async function drive(count: number, one: () => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const cpu = process.cpuUsage();
  const began = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        next++;
        const t0 = performance.now();
        await one();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  const used = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    perSecond: count / seconds,
    p50: at(0.5),
    p99: at(0.99),
    cpuUs: (used.user + used.system) / count,
  };
}

/** Keep-alive connections for the client (node:http: cheaper than fetch, so the server's cost shows). */
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT * 2 });

function call(url: string, method: string, body?: string): Promise<{ status: number; text: string }> {
  return httpCall(url, { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, body);
}

/** A no-op task API on `store`, served on a loopback port, driven over HTTP (`probe`: the store's Redis). */
async function tiffin(store: TaskStore, probe?: Redis): Promise<Figures> {
  const svc = new Service('bench', { tasks: { store, concurrency: CONCURRENCY } }).api(
    { name: 'noop', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
    async () => ({}),
  );
  const handle = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: false });
  const one = async () => {
    const res = await call(`${handle.url}/noop/submit`, 'POST', '{}');
    if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${res.text}`);
    const { id } = JSON.parse(res.text) as { id: string };
    // The stream ends after the task's last event: `done`, or `succeeded` when it had ended already.
    const events = (await call(`${handle.url}/noop/events?id=${id}`, 'GET')).text;
    if (!/^event: (done|succeeded)$/m.test(events)) throw new Error(`task ${id} did not succeed: ${events}`);
  };
  try {
    await drive(WARMUP, one);
    return probe ? await driveOnRedis(probe, TASKS, one) : await drive(TASKS, one);
  } finally {
    await handle.close();
    await store.close?.();
  }
}

const STORED: TaskRequest = {
  method: 'POST',
  url: '/noop/submit',
  headers: [['content-type', 'application/json']],
  body: Buffer.from('{}'),
};
const ANSWER: TaskResult = {
  status: 200,
  headers: [['content-type', 'application/json']],
  body: Buffer.from('{}'),
};

/**
 * The store alone, no HTTP: `CONCURRENCY` loops claim and complete (woken by each submit, or after 5 ms), and
 * each task is submitted and its events read to the last, as the task routes and the runner call the store.
 */
async function storeAlone(store: TaskStore, probe?: Redis): Promise<Figures> {
  const idle: Array<() => void> = [];
  let stopped = false;
  // As core's task runner does: told when tasks are queued (by another process, or handed back), which also
  // tells the store that a claim follows each completion.
  const stopWatching = store.onQueued?.(() => {
    for (const wake of idle.splice(0)) wake();
  });
  const runners = Array.from({ length: CONCURRENCY }, async () => {
    while (!stopped) {
      const task = await store.claim();
      if (task) {
        await store.complete(task.id, ANSWER);
        continue;
      }
      // Nothing queued: wait for the next submit, or 5 ms (a submit may land between the claim and the wait).
      await new Promise<void>((wake) => {
        idle.push(wake);
        setTimeout(wake, 5);
      });
    }
  });
  const one = async () => {
    const { id } = await store.submit('noop', STORED);
    for (const wake of idle.splice(0)) wake();
    const reading = new AbortController();
    for await (const event of store.events(id, reading.signal)) {
      if (!isFinalEvent(event)) continue;
      if (event.event !== 'done' && event.event !== 'succeeded')
        throw new Error(`task ${id} ended ${event.event}`);
      break;
    }
    reading.abort();
  };
  try {
    await drive(WARMUP, one);
    return probe ? await driveOnRedis(probe, TASKS, one) : await drive(TASKS, one);
  } finally {
    stopped = true;
    stopWatching?.();
    for (const wake of idle.splice(0)) wake();
    await Promise.all(runners);
    await store.close?.();
  }
}

/** BullMQ alone: a Queue, a Worker doing nothing, each job awaited through QueueEvents. */
async function bareBullmq(url: string, name: string, probe: Redis): Promise<Figures> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection: { url } });
  const worker = new Worker(name, async () => ({}), { connection, concurrency: CONCURRENCY });
  // Each job awaited listens for the queue closing: that many listeners are expected.
  queue.setMaxListeners(IN_FLIGHT + 10);
  events.setMaxListeners(IN_FLIGHT + 10);
  await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
  const one = async () => {
    const job = await queue.add('noop', {}, { removeOnComplete: { age: 600 }, removeOnFail: { age: 600 } });
    await job.waitUntilFinished(events);
  };
  try {
    await drive(WARMUP, one);
    return await driveOnRedis(probe, TASKS, one);
  } finally {
    await worker.close();
    await Promise.all([queue.close(), events.close()]);
    connection.disconnect();
  }
}

const ALL_CASES = [
  'memory',
  'disk (LMDB)',
  'Redis',
  'bare BullMQ',
  'store alone: memory',
  'store alone: disk (LMDB)',
  'store alone: Redis',
] as const;
type Case = (typeof ALL_CASES)[number];
/**
 * CASES=memory,Redis runs only those (a case runs when its name starts with one given: `store` runs the three
 * `store alone` cases); bare BullMQ is the ratios' reference.
 */
const cases: readonly Case[] = process.env.CASES
  ? ALL_CASES.filter((c) => process.env.CASES?.split(',').some((name) => c.startsWith(name)))
  : ALL_CASES;

async function main(): Promise<void> {
  const redis = await RedisServer.start('everysec');
  // REDIS_CPU=0 (with the bench under `taskset -c 1`): redis-server on a CPU of its own, as the figures were taken.
  if (process.env.REDIS_CPU !== undefined && redis.pid !== undefined)
    execFileSync('taskset', ['-pc', process.env.REDIS_CPU, String(redis.pid)], { stdio: 'ignore' });
  /** A fresh store of the case's kind (its own queue or folder). */
  const open = async (c: Case, queue: string, folder: string): Promise<TaskStore> =>
    c.endsWith('memory')
      ? new MemoryTaskStore(LIMITS)
      : c.endsWith('disk (LMDB)')
        ? await LmdbTaskStore.open({ dir: folder, ...LIMITS })
        : await RedisTaskStore.open({ url: redis.url, queue, ...LIMITS });
  const probe = new Redis(redis.url);
  const dir = mkdtempSync(join(tmpdir(), 'tiffin-bench-tasks-'));
  const results = new Map<Case, Figures[]>(cases.map((c) => [c, []]));
  const loads: string[] = [
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  ];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with a different case, so none always runs first (or last).
      const order = cases.map((_, k) => cases[(k + round) % cases.length] as Case);
      for (const [k, c] of order.entries()) {
        const queue = `bench-${round}`;
        const figures =
          c === 'bare BullMQ'
            ? await bareBullmq(redis.url, `${queue}-bare`, probe)
            : await (c.startsWith('store alone') ? storeAlone : tiffin)(
                await open(c, `${queue}-${k}`, join(dir, `${round}-${k}`)),
                c.endsWith('Redis') ? probe : undefined,
              );
        results.get(c)?.push(figures);
        console.log(
          `round ${round + 1} ${c.padEnd(24)} ${figures.perSecond.toFixed(0).padStart(6)} tasks/s  p50 ${figures.p50.toFixed(2)} ms  p99 ${figures.p99.toFixed(2)} ms  CPU ${figures.cpuUs.toFixed(0)} µs/task${figures.redis ? `  redis-server: ${figures.redis.reads.toFixed(2)} reads, ${figures.redis.inKb.toFixed(1)} KiB in, ${figures.redis.cpuUs.toFixed(0)} µs CPU per task` : ''}`,
        );
      }
      loads.push(
        loadavg()
          .map((l) => l.toFixed(2))
          .join(' '),
      );
    }
  } finally {
    probe.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const spread = (values: number[], digits: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    return `${(sorted[0] as number).toFixed(digits)} / ${median.toFixed(digits)} / ${(sorted.at(-1) as number).toFixed(digits)}`;
  };
  const onRedis = (runs: Figures[], pick: (r: { reads: number; cpuUs: number }) => number, digits: number) =>
    runs.every((r) => r.redis)
      ? spread(
          runs.map((r) => pick(r.redis as { reads: number; cpuUs: number })),
          digits,
        )
      : '–';
  const bare = results.get('bare BullMQ') ?? [];
  console.log(
    `\n${TASKS} tasks per run, ${IN_FLIGHT} in flight, ${CONCURRENCY} run at once, ${ROUNDS} rounds; min / median / max`,
  );
  console.log(
    '| store | tasks/s | p50 ms | p99 ms | tasks/s ÷ bare BullMQ (same round) | Node CPU µs per task | redis-server reads per task | redis-server CPU µs per task |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const c of cases) {
    const runs = results.get(c) as Figures[];
    const ratios = runs.map((r, k) => r.perSecond / (bare[k]?.perSecond ?? Number.NaN));
    console.log(
      `| ${c} | ${spread(
        runs.map((r) => r.perSecond),
        0,
      )} | ${spread(
        runs.map((r) => r.p50),
        2,
      )} | ${spread(
        runs.map((r) => r.p99),
        2,
      )} | ${spread(ratios, 2)} | ${spread(
        runs.map((r) => r.cpuUs),
        0,
      )} | ${onRedis(runs, (r) => r.reads, 2)} | ${onRedis(runs, (r) => r.cpuUs, 0)} |`,
    );
  }
  console.log(`load average (1/5/15 min) before and after each round: ${loads.join(' → ')}`);
}

await main();
agent.destroy();
