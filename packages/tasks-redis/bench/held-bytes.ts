/**
 * What tasks hold in Redis: redis-server's `used_memory` before and after tasks run to their end, on a
 * redis-server of its own (no append-only file, so the figure is the data alone).
 *
 * 1. `per answer byte`: the store alone, TASKS tasks with a small request, each answered with ANSWER_BYTES bytes;
 *    the growth of `used_memory` per byte of answer (the answers are kept for their time to live). Redis's
 *    allocator rounds a large value up to its size class (1 MiB and a few bytes take 1.25 MiB): ANSWER_BYTES=1000000
 *    shows the bytes without that rounding.
 * 2. `big submits`: a service on the Redis store over HTTP, an echo task API (the request body is the answer),
 *    SUBMITS submits of SUBMIT_MB MB one after the other with the default bounds (`maxHeldBytes` 512 MiB):
 *    how many were accepted, how many refused, and what Redis holds once the accepted ones ended.
 *
 * `npx tsx --conditions=source packages/tasks-redis/bench/held-bytes.ts` (TASKS=16 ANSWER_BYTES=1048576 SUBMITS=24
 * SUBMIT_MB=30 to change; CASES=answer or CASES=submits runs one).
 */
import { randomBytes } from 'node:crypto';
import { File, Service, serve } from '@tiffin/core';
import { Redis } from 'ioredis';
import { RedisTaskStore } from '../src/index.js';
import { RedisServer } from '../test/redis-server.js';
import { httpCall } from './http-call.js';

const TASKS = Number(process.env.TASKS ?? 16);
const ANSWER_BYTES = Number(process.env.ANSWER_BYTES ?? 1024 * 1024);
const SUBMITS = Number(process.env.SUBMITS ?? 24);
const SUBMIT_MB = Number(process.env.SUBMIT_MB ?? 30);
const CASES = (process.env.CASES ?? 'answer,submits').split(',');
const MIB = 1024 * 1024;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** redis-server's `used_memory` (bytes), read after its lazy frees have run. */
async function usedMemory(probe: Redis): Promise<number> {
  await sleep(500);
  const info = await probe.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/** BullMQ's events stream of `queue`: its entries and bytes (`MEMORY USAGE`, every entry sampled). */
async function eventsStream(probe: Redis, queue: string): Promise<{ entries: number; bytes: number }> {
  const key = `tiffin:${queue}:events`;
  const [entries, bytes] = await Promise.all([
    probe.xlen(key),
    probe.call('MEMORY', 'USAGE', key, 'SAMPLES', '0') as Promise<number | null>,
  ]);
  return { entries, bytes: bytes ?? 0 };
}

async function perAnswerByte(url: string, probe: Redis): Promise<void> {
  const queue = 'held-answer';
  const store = await RedisTaskStore.open({ url, queue, maxTasks: TASKS + 1, maxClientTasks: TASKS + 1 });
  const answer = randomBytes(ANSWER_BYTES);
  try {
    const before = await usedMemory(probe);
    for (let k = 0; k < TASKS; k++) {
      const submitted = await store.submit('api', {
        method: 'POST',
        url: '/api/submit',
        headers: [['content-type', 'application/json']],
        body: Buffer.from('{}'),
      });
      const task = await store.claim();
      if (task?.id !== submitted.id) throw new Error('the claim took another task');
      await store.complete(task.id, {
        status: 200,
        headers: [['content-type', 'application/octet-stream']],
        body: answer,
      });
      if ((await store.status(task.id)).status !== 'succeeded')
        throw new Error(`task ${task.id} did not succeed`);
    }
    const after = await usedMemory(probe);
    const stream = await eventsStream(probe, queue);
    const answered = TASKS * answer.byteLength;
    console.log(
      `per answer byte: ${TASKS} tasks of ${ANSWER_BYTES}-byte answers: used_memory +${((after - before) / MIB).toFixed(1)} MiB, ${((after - before) / answered).toFixed(2)} bytes in Redis per byte of answer; BullMQ's events stream ${stream.entries} entries, ${(stream.bytes / MIB).toFixed(2)} MiB`,
    );
  } finally {
    await store.close();
  }
}

/** POST `body` to `url`; the status and the answer's text. */
function post(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  return httpCall(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream' } }, body);
}

async function bigSubmits(url: string, probe: Redis): Promise<void> {
  const queue = 'held-submits';
  const store = await RedisTaskStore.open({ url, queue });
  const svc = new Service(queue, { tasks: { store } }).api(
    { name: 'echo', input: new File(), output: new File(), task: true },
    async (file) => file.bytes,
  );
  const handle = await serve(svc, {
    port: 0,
    host: '127.0.0.1',
    handleSignals: false,
    logger: false,
    maxBodySize: 64 * MIB,
  });
  const body = randomBytes(SUBMIT_MB * 1_000_000);
  try {
    const before = await usedMemory(probe);
    const statuses: Record<number, number> = {};
    const accepted: string[] = [];
    for (let k = 0; k < SUBMITS; k++) {
      const res = await post(`${handle.url}/echo/submit`, body);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status === 202) accepted.push((JSON.parse(res.text) as { id: string }).id);
    }
    // Every accepted task to its end.
    for (const id of accepted)
      while (!['succeeded', 'failed', 'cancelled'].includes((await store.status(id)).status))
        await sleep(100);
    const ends: Record<string, number> = {};
    for (const id of accepted) {
      const { status } = await store.status(id);
      ends[status] = (ends[status] ?? 0) + 1;
    }
    const after = await usedMemory(probe);
    const stream = await eventsStream(probe, queue);
    const sent = accepted.length * body.byteLength;
    console.log(
      `big submits: ${SUBMITS} submits of ${SUBMIT_MB} MB: answered ${JSON.stringify(statuses)}, the accepted ones ended ${JSON.stringify(ends)}; used_memory +${((after - before) / 1e9).toFixed(2)} GB (${((after - before) / sent).toFixed(2)}× what the accepted submits sent); BullMQ's events stream ${stream.entries} entries, ${(stream.bytes / MIB).toFixed(1)} MiB`,
    );
  } finally {
    await handle.close();
    await store.close();
  }
}

async function main(): Promise<void> {
  const redis = await RedisServer.start('everysec');
  const probe = new Redis(redis.url);
  try {
    // The data alone: no append-only file (its buffer would count in `used_memory`).
    await probe.config('SET', 'appendonly', 'no');
    if (CASES.includes('answer')) await perAnswerByte(redis.url, probe);
    if (CASES.includes('submits')) await bigSubmits(redis.url, probe);
  } finally {
    probe.disconnect();
    await redis.stop();
  }
}

await main();
