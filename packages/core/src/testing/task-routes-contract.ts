import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadInput } from '../errors/index.js';
import { JSONDescriptor } from '../io/descriptors/json.js';
import { MemoryLogger } from '../logging/logger.js';
import { type ServerHandle, serve } from '../server/serve.js';
import { Service } from '../service/service.js';
import type { TaskStore, TaskView } from '../tasks/task-store.js';
import type { ContractLimits, DurableContract } from './task-store-contract.js';

/**
 * The task routes over a listening server, on any store: every route given a bad id, cancel twice, get before
 * done, an answer over the store's bound; then `/metrics` after that work. Run by the memory and disk stores
 * (core) and the Redis store (`@tiffin/tasks-redis`), as `describeTaskStore` is; a durable store passes
 * `durable` too, and the suite checks that a task running when its process stopped runs again, counted as
 * retried, and that a store gone answers 503.
 */

/** The service on a loopback port, its logs kept in memory. */
function start(svc: Service): Promise<ServerHandle> {
  return serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: new MemoryLogger() });
}

const MAX_RESULT_BYTES = 2048;

/**
 * Ids that are not of the form a store mints, each answered 404 `JOB_NOT_FOUND` by every route before any store
 * sees it: malformed escapes, a path, a UUID the store did not hand out, a NUL, an over-long id, and a store's own
 * key names (BullMQ's under the queue's prefix). A store's own tests may add the names of its own keys.
 */
export const NOT_TASK_IDS: readonly string[] = [
  '%E2%98%83%F0%9F%90%88',
  '%ZZ%',
  'nope',
  '..%2F..%2Fetc',
  '00000000-0000-4000-8000-000000000000',
  '%00',
  'a'.repeat(128),
  'stalled-check',
  'meta',
  'events',
  'id',
  'wait',
  'active',
];

function routesService(store: TaskStore): Service {
  return new Service('task-routes', { tasks: { store } })
    .api(
      { name: 'count', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input, ctx) => {
        const { steps, ms = 5 } = input as { steps: number; ms?: number };
        for (let k = 1; k <= steps; k++) {
          if (ctx.request.signal.aborted) throw new BadInput('stopped');
          await sleep(ms);
          ctx.progress(k, steps);
        }
        return { counted: steps, task: ctx.taskId ?? null };
      },
    )
    .api(
      { name: 'big', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input) => ({ text: 'x'.repeat((input as { bytes: number }).bytes) }),
    )
    .api(
      { name: 'boom', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async () => {
        throw new BadInput('the input asked to fail');
      },
    );
}

/** The value of one sample in Prometheus text, or undefined: `name{a="x",b="y"} 3` with those labels. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const close = line.lastIndexOf('}');
    const have = open === name.length ? line.slice(open + 1, close) : '';
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`)))
      return Number(line.slice((close > 0 ? close : name.length) + 1).trim());
  }
  return undefined;
}

/** The events of a `text/event-stream` answer, read as they come: `until` waits for the next that matches. */
function sseReader(res: Response): {
  until(match: (e: { event: string }) => boolean): Promise<Record<string, unknown>>;
} {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    async until(match) {
      for (;;) {
        const end = text.indexOf('\n\n');
        if (end >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined && match({ event }))
            return JSON.parse(data) as Record<string, unknown>;
          continue;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error('the event stream ended');
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

export function describeTaskRoutes(
  name: string,
  make: (limits: ContractLimits) => Promise<TaskStore>,
  durable?: DurableContract,
): void {
  describe(`the task routes over HTTP on ${name}`, () => {
    let store: TaskStore;
    let handle: ServerHandle;
    const url = (path: string) => `${handle.url}${path}`;
    const post = (path: string, body?: unknown) =>
      fetch(url(path), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const submit = async (api: string, body: unknown): Promise<string> => {
      const res = await post(`/${api}/submit`, body);
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    };
    const status = async (api: string, id: string) =>
      (await (await fetch(url(`/${api}/status?id=${id}`))).json()) as TaskView;
    const until = async (api: string, id: string, done: (v: TaskView) => boolean): Promise<TaskView> => {
      for (;;) {
        const view = await status(api, id);
        if (done(view)) return view;
        await sleep(10);
      }
    };
    const finished = (v: TaskView) => ['succeeded', 'failed', 'cancelled'].includes(v.status);
    const answer = async (res: Response) => ({
      status: res.status,
      code: ((await res.json()) as { code?: string }).code,
    });
    const metrics = async () => (await fetch(url('/metrics'))).text();

    beforeAll(async () => {
      store = await make({
        maxTasks: 16,
        maxClientTasks: 16,
        resultTtl: 600,
        maxResultBytes: MAX_RESULT_BYTES,
      });
      handle = await start(routesService(store));
    });
    afterAll(async () => {
      await handle?.close();
      await store?.close?.();
    });

    it('answers every route given a missing, repeated, huge, malformed or unknown id with a 4xx and a code', async () => {
      const routes: Array<[string, string]> = [
        ['GET', 'status'],
        ['GET', 'get'],
        ['GET', 'events'],
        ['POST', 'cancel'],
      ];
      for (const [method, op] of routes) {
        const at = (query: string) => fetch(url(`/count/${op}${query}`), { method });
        for (const query of ['', '?id=', '?id=a&id=b'])
          expect(await answer(await at(query))).toEqual({ status: 400, code: 'TASK_ID_REQUIRED' });
        expect(await answer(await at(`?id=${'9'.repeat(10_000)}`))).toEqual({
          status: 400,
          code: 'TASK_ID_INVALID',
        });
        for (const id of NOT_TASK_IDS)
          expect(await answer(await at(`?id=${id}`))).toEqual({ status: 404, code: 'JOB_NOT_FOUND' });
      }
      expect((await fetch(url('/count/cancel?id=nope'))).status).toBe(405);
      expect((await post('/count/status?id=nope')).status).toBe(405);
      // A bad input is refused at submit, not stored to fail later.
      const bad = await fetch(url('/count/submit'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"steps": 3',
      });
      expect(bad.status).toBe(400);
      expect((await answer(bad)).code).toMatch(/^[A-Z_]+$/);
    });

    it('get before done is 409; cancel twice is 200 both times and ends cancelled; get after it stays 409', async () => {
      const before = Date.now();
      const running = await submit('count', { steps: 2000, ms: 5 });
      const queued = await submit('count', { steps: 1 });
      const behind = await submit('count', { steps: 1 });
      await until('count', running, (v) => v.status === 'running' && v.step >= 1);
      expect((await status('count', queued)).status).toBe('queued');
      // Queue depth and running, read from the store.
      const text = await metrics();
      expect(sample(text, 'tiffin_api_server_tasks_running', { api_name: 'count' })).toBe(1);
      expect(sample(text, 'tiffin_api_server_tasks_queued', { api_name: 'count' })).toBe(2);
      // The oldest waiting task's age, from the store: no older than this test's first submit.
      const oldest = sample(text, 'tiffin_api_server_tasks_oldest_queued_seconds');
      expect(oldest).toBeGreaterThanOrEqual(0);
      expect(oldest).toBeLessThanOrEqual((Date.now() - before) / 1000 + 0.001);
      // The task behind hears its place, and its new place once the task ahead of it leaves the queue.
      const places = await fetch(url(`/count/events?id=${behind}`));
      const heard = sseReader(places);
      expect(await heard.until((e) => e.event === 'queued')).toMatchObject({ queue_position: 2 });
      await (await post(`/count/cancel?id=${queued}`)).body?.cancel();
      expect(await heard.until((e) => e.event === 'queued')).toMatchObject({ queue_position: 1 });
      await (await post(`/count/cancel?id=${behind}`)).body?.cancel();
      expect(await heard.until((e) => e.event !== 'queued')).toMatchObject({ status: 'cancelled' });
      expect(await answer(await fetch(url(`/count/get?id=${running}`)))).toEqual({
        status: 409,
        code: 'JOB_NOT_DONE',
      });
      expect(await answer(await fetch(url(`/count/get?id=${queued}`)))).toEqual({
        status: 409,
        code: 'JOB_NOT_DONE',
      });
      for (const id of [queued, queued, running, running]) {
        const res = await post(`/count/cancel?id=${id}`);
        expect(res.status).toBe(200);
        await res.body?.cancel();
      }
      expect((await until('count', queued, finished)).status).toBe('cancelled');
      const view = await until('count', running, finished);
      expect(view.status).toBe('cancelled');
      expect(view.error?.code).toBe('CANCELLED');
      expect((await post(`/count/cancel?id=${running}`)).status).toBe(200);
      expect(await answer(await fetch(url(`/count/get?id=${running}`)))).toEqual({
        status: 409,
        code: 'JOB_NOT_DONE',
      });
    });

    it('fails a task whose answer is over the bound with 507 TASK_RESULT_TOO_LARGE; get is 409', async () => {
      const id = await submit('big', { bytes: MAX_RESULT_BYTES * 2 });
      const view = await until('big', id, finished);
      expect(view.status).toBe('failed');
      expect(view.error?.code).toBe('TASK_RESULT_TOO_LARGE');
      expect(await answer(await fetch(url(`/big/get?id=${id}`)))).toEqual({
        status: 409,
        code: 'JOB_NOT_DONE',
      });
      const small = await submit('big', { bytes: 10 });
      expect((await until('big', small, finished)).status).toBe('succeeded');
      expect(await (await fetch(url(`/big/get?id=${small}`))).json()).toEqual({ text: 'x'.repeat(10) });
    });

    it('reports the work on /metrics: submitted, run times by status, failures by code', async () => {
      const failed = await submit('boom', {});
      expect((await until('boom', failed, finished)).error?.code).toBe('BAD_INPUT');
      // The runner counts a task once the store took its end, which a client may see a moment before.
      let text = await metrics();
      while (!text.includes('tiffin_api_server_tasks_failed_total{api_name="boom"')) {
        await sleep(20);
        text = await metrics();
      }
      expect(sample(text, 'tiffin_api_server_tasks_submitted_total', { api_name: 'big' })).toBe(2);
      expect(sample(text, 'tiffin_api_server_tasks_submitted_total', { api_name: 'count' })).toBe(3);
      const runs = (api: string, s: string) =>
        sample(text, 'tiffin_api_server_task_duration_seconds_count', { api_name: api, status: s });
      expect(runs('big', 'succeeded')).toBe(1);
      expect(runs('big', 'failed')).toBe(1);
      expect(runs('count', 'cancelled')).toBe(1);
      expect(runs('boom', 'failed')).toBe(1);
      expect(
        sample(text, 'tiffin_api_server_tasks_failed_total', { api_name: 'boom', code: 'BAD_INPUT' }),
      ).toBe(1);
      expect(
        sample(text, 'tiffin_api_server_tasks_failed_total', {
          api_name: 'big',
          code: 'TASK_RESULT_TOO_LARGE',
        }),
      ).toBe(1);
      // Nothing unfinished now.
      expect(sample(text, 'tiffin_api_server_tasks_queued', { api_name: 'count' }) ?? 0).toBe(0);
      expect(sample(text, 'tiffin_api_server_tasks_running', { api_name: 'count' }) ?? 0).toBe(0);
      expect(sample(text, 'tiffin_api_server_tasks_oldest_queued_seconds') ?? 0).toBe(0);
      expect(sample(text, 'tiffin_api_server_task_store_errors_total')).toBeUndefined();
    });

    it.runIf(durable !== undefined)(
      'runs again a task its stopped process was running, counted as retried',
      async () => {
        const id = await submit('count', { steps: 400, ms: 10 });
        await until('count', id, (v) => v.status === 'running' && v.step >= 1);
        // The process stops: its server goes, its store is left as a kill leaves it.
        const reopened = await (durable as DurableContract).reopen(store);
        const old = handle;
        store = reopened;
        handle = await start(routesService(reopened));
        void old.close().catch(() => {});
        // A shared store's lease lapses first (a second in this suite), then the task is claimed again.
        let retried: number | undefined;
        while (retried === undefined) {
          await sleep(50);
          retried = sample(await metrics(), 'tiffin_api_server_tasks_retried_total', { api_name: 'count' });
        }
        expect(retried).toBe(1);
        expect((await status('count', id)).status).toBe('running');
        const res = await post(`/count/cancel?id=${id}`);
        expect(res.status).toBe(200);
        await until('count', id, finished);
      },
    );

    it.runIf(durable !== undefined)(
      'answers 503 TASK_STORE_UNAVAILABLE once the store is gone, and counts the store errors',
      async () => {
        await store.close?.();
        const res = await post('/count/submit', { steps: 1 });
        expect(await answer(res)).toEqual({ status: 503, code: 'TASK_STORE_UNAVAILABLE' });
        expect(res.headers.get('retry-after')).not.toBeNull();
        const text = await metrics();
        expect(
          sample(text, 'tiffin_api_server_task_store_errors_total', { operation: 'submit' }),
        ).toBeGreaterThanOrEqual(1);
      },
    );
  });
}
