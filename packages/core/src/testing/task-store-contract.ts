import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { followTask } from '../tasks/runner/follow-task.js';
import { isTaskId } from '../tasks/task-id.js';
import type { TaskEvent, TaskRequest, TaskStore } from '../tasks/task-store.js';

/**
 * What any `TaskStore` must do, written against the interface only, so every store (in memory, on disk,
 * Redis, a store of a user's own) runs the same suite from `@tiffin/core/testing` in its vitest tests:
 * `describeTaskStore('RedisTaskStore', (limits) => RedisTaskStore.open({ url, ...limits }))`. A durable store
 * also passes `durable`, and the suite checks what survives its process. It imports vitest, so only this entry
 * needs it (an optional peer dependency of `@tiffin/core`); `@tiffin/core` itself never loads it.
 */
export interface ContractLimits {
  maxTasks: number;
  /** Unfinished tasks one client may hold. */
  maxClientTasks: number;
  /** Seconds. */
  resultTtl: number;
  maxResultBytes: number;
}

export interface DurableContract {
  /**
   * A second store on the same data, as a process started after `store`'s process stopped would open it
   * (the first one is left as a killed process leaves it: its running tasks unsettled, its leases lapsing).
   */
  reopen(store: TaskStore): Promise<TaskStore>;
}

const request = (body = '{}'): TaskRequest => ({
  method: 'POST',
  url: '/api/submit',
  headers: [['content-type', 'application/json']],
  body: Buffer.from(body),
});
const answer = (body: string) => ({
  status: 200,
  headers: [['content-type', 'application/json']] as Array<[string, string]>,
  body: Buffer.from(body),
});

async function collect(events: AsyncIterable<TaskEvent>): Promise<string[]> {
  const names: string[] = [];
  for await (const { event } of events) names.push(event);
  return names;
}

export function describeTaskStore(
  name: string,
  make: (limits: ContractLimits) => TaskStore | Promise<TaskStore>,
  durable?: DurableContract,
): void {
  const opened: TaskStore[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close?.();
  });
  const store = async (limits: Partial<ContractLimits> = {}) => {
    const s = await make({ maxTasks: 8, maxClientTasks: 8, resultTtl: 600, maxResultBytes: 1024, ...limits });
    opened.push(s);
    return s;
  };

  describe(`${name} (the TaskStore contract)`, () => {
    it('takes tasks in submit order, once each, and keeps the request for the runner', async () => {
      const s = await store();
      const a = await s.submit('api', request('"a"'));
      const b = await s.submit('api', request('"b"'));
      expect(a).toMatchObject({ api: 'api', status: 'queued', step: 0, total_steps: null, error: null });
      // The form the task routes let through to a store (anything else is a 404 before the store is asked).
      expect([a.id, b.id].filter((id) => !isTaskId(id))).toEqual([]);
      const first = await s.claim();
      expect(first).toMatchObject({ id: a.id, api: 'api', attempt: 1 });
      expect(Buffer.from(first?.request.body ?? []).toString()).toBe('"a"');
      expect((await s.claim())?.id).toBe(b.id);
      expect(await s.claim()).toBeNull();
      expect((await s.status(a.id)).status).toBe('running');
    });

    it('records progress, the result, and a failure with its error body', async () => {
      const s = await store();
      const ok = await s.submit('api', request());
      const bad = await s.submit('api', request());
      await s.claim();
      await s.claim();
      await s.progress(ok.id, { step: 2, totalSteps: 5 });
      expect(await s.status(ok.id)).toMatchObject({ status: 'running', step: 2, total_steps: 5 });
      await s.complete(ok.id, answer('{"x":1}'));
      const view = await s.status(ok.id);
      expect(view.status).toBe('succeeded');
      expect(view.finished_at).not.toBeNull();
      expect(view.expires_at).not.toBeNull();
      expect(Buffer.from((await s.result(ok.id)).body).toString()).toBe('{"x":1}');
      await s.fail(bad.id, { error: 'no', type: 'BadInput', code: 'BAD_INPUT' });
      expect(await s.status(bad.id)).toMatchObject({ status: 'failed', error: { code: 'BAD_INPUT' } });
      await expect(s.result(bad.id)).rejects.toMatchObject({ code: 'JOB_NOT_DONE', httpStatus: 409 });
      // A settled task stays as it is.
      await s.complete(bad.id, answer('late'));
      expect((await s.status(bad.id)).status).toBe('failed');
    });

    it('refuses an answer over its size bound: the task fails with TASK_RESULT_TOO_LARGE', async () => {
      const s = await store({ maxResultBytes: 8 });
      const t = await s.submit('api', request());
      await s.claim();
      await s.complete(t.id, answer('x'.repeat(9)));
      expect((await s.status(t.id)).error?.code).toBe('TASK_RESULT_TOO_LARGE');
    });

    it('cancels: a queued task at once, a running one through onCancel; twice is harmless', async () => {
      const s = await store();
      const running = await s.submit('api', request());
      const queued = await s.submit('api', request());
      await s.claim();
      let told = 0;
      const stop = s.onCancel(running.id, () => told++);
      // The cancel that ended the queued task alone gets its stored request back (its webhook is told from it).
      const first = await s.cancel(queued.id);
      expect(first.status).toBe('cancelled');
      expect(first.queuedRequest?.headers).toEqual(request().headers);
      expect(Buffer.from(first.queuedRequest?.body ?? []).toString()).toBe(
        Buffer.from(request().body).toString(),
      );
      const again = await s.cancel(queued.id);
      expect(again.status).toBe('cancelled');
      expect(again.queuedRequest).toBeUndefined();
      expect((await s.status(queued.id)).error?.code).toBe('CANCELLED');
      expect(await s.claim()).toBeNull();
      expect((await s.cancel(running.id)).queuedRequest).toBeUndefined();
      expect(told).toBe(1);
      stop();
      await s.cancel(running.id);
      expect(told).toBe(1);
    });

    it('streams events to the final one; a finished task answers its state once; an abort ends a stream', async () => {
      const s = await store();
      const t = await s.submit('api', request());
      const stream = collect(s.events(t.id, new AbortController().signal));
      // A remote store (Redis) subscribes asynchronously: let the stream open before the task moves on.
      await sleep(50);
      await s.claim();
      await s.progress(t.id, { step: 1, totalSteps: 2, detail: { note: 'hi' } });
      await s.complete(t.id, answer('{}'));
      expect(await stream).toEqual(['queued', 'started', 'step', 'done']);
      expect(await collect(s.events(t.id, new AbortController().signal))).toEqual(['succeeded']);
      const other = await s.submit('api', request());
      const leaving = new AbortController();
      const cut = collect(s.events(other.id, leaving.signal));
      await sleep(5);
      leaving.abort();
      expect(await cut).toEqual(['queued']);
    });

    it('bounds unfinished tasks (503 JOBS_FULL) and keeps finished answers for their whole time to live', async () => {
      const s = await store({ maxTasks: 2 });
      const a = await s.submit('api', request());
      await s.claim();
      await s.complete(a.id, answer('{"a":1}'));
      const b = await s.submit('api', request());
      await s.submit('api', request());
      await expect(s.submit('api', request())).rejects.toMatchObject({ code: 'JOBS_FULL', httpStatus: 503 });
      // Another client's finished answer is not given up to make room.
      expect(Buffer.from((await s.result(a.id)).body).toString()).toBe('{"a":1}');
      expect((await s.status(b.id)).status).toBe('queued');
    });

    it('keeps each client within its share of unfinished tasks (429 JOBS_CLIENT_FULL); others still submit', async () => {
      const s = await store({ maxTasks: 4, maxClientTasks: 2 });
      const first = await s.submit('api', request(), { client: 'greedy' });
      await s.submit('api', request(), { client: 'greedy' });
      await expect(s.submit('api', request(), { client: 'greedy' })).rejects.toMatchObject({
        code: 'JOBS_CLIENT_FULL',
        httpStatus: 429,
      });
      await s.submit('api', request(), { client: 'polite' });
      // A finished task gives its client's slot back.
      await s.claim();
      await s.complete(first.id, answer('{}'));
      await s.submit('api', request(), { client: 'greedy' });
      await expect(s.submit('api', request(), { client: 'greedy' })).rejects.toMatchObject({
        code: 'JOBS_CLIENT_FULL',
      });
      // A failed one gives it back once, not twice.
      const second = (await s.claim()) as { id: string };
      await s.fail(second.id, { error: 'no', type: 'BadInput', code: 'BAD_INPUT' });
      const cancelled = await s.submit('api', request(), { client: 'greedy' });
      await expect(s.submit('api', request(), { client: 'greedy' })).rejects.toMatchObject({
        code: 'JOBS_CLIENT_FULL',
      });
      await s.cancel(cancelled.id);
      await s.submit('api', request(), { client: 'greedy' });
      await expect(s.submit('api', request(), { client: 'greedy' })).rejects.toMatchObject({
        code: 'JOBS_CLIENT_FULL',
      });
    });

    it('tells a queued task its place (status and events), which falls as tasks ahead start; then an estimate', async () => {
      const s = await store();
      const ids: string[] = [];
      for (let k = 0; k < 4; k++) ids.push((await s.submit('api', request(`${k}`))).id);
      const last = ids[3] as string;
      expect(await s.status(last)).toMatchObject({ status: 'queued', queue_position: 4, eta_seconds: null });
      const positions: unknown[] = [];
      const leaving = new AbortController();
      const stream = (async () => {
        // The store's events as the routes send them: core adds the places (`followTask`).
        for await (const { event, data } of followTask(s, last, leaving.signal)) {
          if (event === 'queued') positions.push(data.queue_position);
          if (event === 'started') return;
        }
      })();
      await sleep(50);
      const first = await s.claim();
      await s.complete(first?.id as string, answer('{}'));
      // A task that ends while queued leaves the queue as well.
      await s.cancel(ids[1] as string);
      const view = await s.status(last);
      expect(view).toMatchObject({ status: 'queued', queue_position: 2 });
      // One run finished: the estimate is the position times its time.
      expect(view.eta_seconds).toEqual(expect.any(Number));
      for (let k = 0; k < 100 && positions.at(-1) !== 2; k++) await sleep(20);
      expect((await s.claim())?.id).toBe(ids[2]);
      for (let k = 0; k < 100 && positions.at(-1) !== 1; k++) await sleep(20);
      expect(await s.status(last)).toMatchObject({ queue_position: 1 });
      expect((await s.claim())?.id).toBe(last);
      await stream;
      // Each event names a place no later than the one before, from 4 down to 1.
      expect(positions[0]).toBe(4);
      expect(positions.at(-1)).toBe(1);
      expect([...positions].sort().reverse()).toEqual(positions);
      const running = await s.status(last);
      expect(running.queue_position).toBeUndefined();
    });

    it('forgets finished tasks after their time to live, and unknown ids are 404', async () => {
      const s = await store({ resultTtl: 0.05 });
      const t = await s.submit('api', request());
      await s.claim();
      await s.fail(t.id, { error: 'x', type: 'InternalServerError', code: 'INTERNAL_ERROR' });
      await sleep(80);
      expect(await s.expire()).toBeGreaterThanOrEqual(0);
      await expect(s.status(t.id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
      for (const id of ['', 'x'.repeat(100_000), '☃🐈', '../../etc/passwd', '\u0000']) {
        await expect(s.status(id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
        await expect(s.cancel(id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
        await expect(s.result(id)).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' });
      }
    });
  });

  if (durable) describeDurable(name, store, durable);
}

function describeDurable(
  name: string,
  store: (limits?: Partial<ContractLimits>) => Promise<TaskStore>,
  { reopen }: DurableContract,
): void {
  describe(`${name} (what survives its process)`, () => {
    it('after a stop: queued tasks run, running ones run again per attempts, finished answers are kept', async () => {
      const s = await store();
      const done = await s.submit('api', request('"done"'));
      const once = await s.submit('api', request('"once"'), { attempts: 1 });
      const twice = await s.submit('api', request('"twice"'), { attempts: 2 });
      await s.submit('api', request('"queued"'));
      expect((await s.claim())?.id).toBe(done.id);
      await s.complete(done.id, answer('{"kept":true}'));
      expect((await s.claim())?.id).toBe(once.id);
      expect((await s.claim())?.id).toBe(twice.id);
      // The process stops here, with two tasks running and one queued.
      const after = await reopen(s);
      const claimed = new Map<string, number>();
      // The task out of attempts is handed to a claim once, as ended (its runner tells its webhook).
      const ended: string[] = [];
      // A store may find the stopped process's tasks at once, or once their leases lapse (Redis).
      for (let k = 0; k < 100; k++) {
        const task = await after.claim();
        if (task?.ended) ended.push(Buffer.from(task.request.body).toString());
        else if (task) claimed.set(Buffer.from(task.request.body).toString(), task.attempt);
        else if (claimed.size === 2 && ended.length === 1) break;
        else await sleep(100);
      }
      expect(Object.fromEntries(claimed)).toEqual({ '"twice"': 2, '"queued"': 1 });
      expect(ended).toEqual(['"once"']);
      expect(await after.status(once.id)).toMatchObject({
        status: 'failed',
        error: { code: 'TASK_INTERRUPTED' },
      });
      expect(Buffer.from((await after.result(done.id)).body).toString()).toBe('{"kept":true}');
      await after.complete(twice.id, answer('{"second":true}'));
      expect((await after.status(twice.id)).status).toBe('succeeded');
      await after.close?.();
    });
  });
}
