import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BadInput,
  File,
  JSONDescriptor,
  Multipart,
  NDArray,
  NumpyNdarray,
  Service,
} from '../../src/index.js';
import type { MemoryTaskStore } from '../../src/tasks/memory-task-store.js';
import type { TaskView } from '../../src/tasks/task-store.js';
import { sleep, start } from '../server/helpers.js';

/**
 * Core tasks as a user declares them (`task: true`) over a listening server: submit, status, get, cancel,
 * events, with a JSON API, an NDArray API and hostile ids.
 */
type Handle = Awaited<ReturnType<typeof start>>;

interface Steps {
  steps: number;
  /** Milliseconds per step. */
  ms?: number;
}

function userService(tasks: ConstructorParameters<typeof Service>[1] extends infer O ? O : never): Service {
  return new Service('tasks-test', tasks)
    .api(
      { name: 'count', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input, ctx) => {
        const { steps, ms = 5 } = input as Steps;
        for (let k = 1; k <= steps; k++) {
          if (ctx.request.signal.aborted) throw new BadInput('stopped');
          await sleep(ms);
          ctx.progress(k, steps, { note: `step ${k}`, preview: 'x'.repeat(8) });
        }
        // Status and headers of the handler's context are part of the answer a task keeps.
        ctx.response.status = 201;
        ctx.response.headers.set('x-counted', String(steps));
        return { counted: steps, task: ctx.taskId ?? null };
      },
    )
    .api(
      { name: 'scratch', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input, ctx) => {
        // A task's run has its own temp dir, removed once the run is over.
        const dir = await ctx.tempDir();
        await writeFile(join(dir, 'note.json'), JSON.stringify(input));
        return { dir, task: ctx.taskId ?? null };
      },
    )
    .api(
      {
        name: 'ramp',
        input: new JSONDescriptor(),
        output: new NumpyNdarray({ dtype: 'float32' }),
        task: true,
      },
      async (input) => {
        const { n } = input as { n: number };
        return new NDArray(
          Float32Array.from({ length: n }, (_, i) => i / 3),
          [n],
          'float32',
        );
      },
    )
    .api(
      {
        name: 'double',
        input: new NumpyNdarray({ dtype: 'float32' }),
        output: new NumpyNdarray({ dtype: 'float32' }),
        batchable: true,
        task: true,
      },
      async (batch: NDArray) =>
        new NDArray(
          Float32Array.from(batch.data as Float32Array, (v) => v * 2),
          batch.shape,
          'float32',
        ),
    )
    .api(
      {
        name: 'upload',
        input: new Multipart({ doc: new File(), meta: new JSONDescriptor() }),
        output: new JSONDescriptor(),
        task: true,
      },
      async ({ doc, meta }) => ({ name: doc.filename, bytes: doc.bytes.length, meta }),
    )
    .api(
      { name: 'boom', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input) => {
        if ((input as { bad?: boolean }).bad) throw new BadInput('the input asked to fail');
        throw new Error('database at /srv/secret/db.sqlite is gone');
      },
    )
    .api(
      {
        name: 'forever',
        input: new JSONDescriptor(),
        output: new JSONDescriptor(),
        task: true,
        timeout: 0.3,
      },
      async (_input, ctx) => {
        await new Promise((resolve) => ctx.request.signal.addEventListener('abort', resolve));
        stoppedAtDeadline.push(ctx.taskId ?? '');
        return {};
      },
    );
}

/** The `forever` tasks whose work saw its abort signal and stopped. */
const stoppedAtDeadline: string[] = [];
let svc: Service;
let handle: Handle;
const url = (path: string) => `${handle.url}${path}`;
const post = (path: string, body: unknown) =>
  fetch(url(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
async function submit(api: string, body: unknown): Promise<string> {
  const res = await post(`/${api}/submit`, body);
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}
const status = async (api: string, id: string) =>
  (await (await fetch(url(`/${api}/status?id=${id}`))).json()) as TaskView;
async function until(api: string, id: string, done: (v: TaskView) => boolean): Promise<TaskView> {
  for (;;) {
    const view = await status(api, id);
    if (done(view)) return view;
    await sleep(10);
  }
}
const finished = (v: TaskView) => ['succeeded', 'failed', 'cancelled'].includes(v.status);
const code = async (res: Response) => ((await res.json()) as { code: string }).code;

beforeAll(async () => {
  svc = userService({ tasks: { maxTasks: 6, resultTtl: 600 } });
  handle = await start(svc, { maxStreams: 2 });
});
afterAll(async () => {
  await handle?.close();
});

describe('a task API', () => {
  it('answers 202 {id}, streams queued/started/step/done, and get gives the synchronous answer', async () => {
    // Steps 250 ms apart: a subscriber that connects late (a loaded machine) starts from the latest event, so
    // what it must see is a run of steps ending at the last one, then done.
    const id = await submit('count', { steps: 3, ms: 250 });
    const events = await (await fetch(url(`/count/events?id=${id}`))).text();
    const names = [...events.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    const stepsSeen = events
      .split('\n\n')
      .filter((b) => b.includes('event: step'))
      .map((b) => (JSON.parse(b.slice(b.indexOf('data: ') + 6)) as { step: number }).step);
    expect(stepsSeen.length).toBeGreaterThan(0);
    expect(stepsSeen).toEqual(Array.from({ length: stepsSeen.length }, (_, k) => 4 - stepsSeen.length + k));
    expect(names.at(-1)).toBe('done');
    const step = events.split('\n\n').find((b) => b.includes('event: step')) as string;
    expect(JSON.parse(step.slice(step.indexOf('data: ') + 6))).toMatchObject({
      request_id: id,
      status: 'step',
      total_steps: 3,
      note: expect.stringMatching(/^step \d$/),
      preview: 'xxxxxxxx',
    });
    const view = await until('count', id, finished);
    expect(view).toMatchObject({
      id,
      api: 'count',
      status: 'succeeded',
      step: 3,
      total_steps: 3,
      error: null,
    });
    expect(view.expires_at).not.toBeNull();
    expect(handle.logs.records).toContainEqual(
      expect.objectContaining({ msg: 'task ended', taskId: id, api: 'count', status: 'succeeded' }),
    );
    const got = await fetch(url(`/count/get?id=${id}`));
    const direct = await post('/count', { steps: 3 });
    expect(got.status).toBe(201);
    expect(direct.status).toBe(201);
    expect(got.headers.get('x-counted')).toBe('3');
    expect(got.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    // The task knows its id; the synchronous call has none.
    expect(await got.json()).toEqual({ counted: 3, task: id });
    expect(await direct.json()).toEqual({ counted: 3, task: null });
    // Events of a finished task: its final state at once.
    const again = await (await fetch(url(`/count/events?id=${id}`))).text();
    expect(again).toMatch(/^event: succeeded$/m);
  });

  it("a task run's ctx.tempDir() is removed once the run is over", async () => {
    const id = await submit('scratch', { a: 1 });
    await until('scratch', id, finished);
    const got = (await (await fetch(url(`/scratch/get?id=${id}`))).json()) as { dir: string; task: string };
    expect(got.task).toBe(id);
    for (let i = 0; i < 100 && existsSync(got.dir); i++) await sleep(20);
    expect(existsSync(got.dir)).toBe(false);
  });

  it('keeps an NDArray answer byte for byte as the synchronous API encodes it', async () => {
    const id = await submit('ramp', { n: 7 });
    await until('ramp', id, finished);
    const got = await fetch(url(`/ramp/get?id=${id}`));
    const direct = await post('/ramp', { n: 7 });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe(direct.headers.get('content-type'));
    const bytes = Buffer.from(await got.arrayBuffer());
    expect(bytes.equals(Buffer.from(await direct.arrayBuffer()))).toBe(true);
    expect(JSON.parse(bytes.toString('utf8'))).toHaveLength(7);
  });

  it('runs a batchable API as a task through its batcher', async () => {
    const id = await submit('double', [
      [1, 2],
      [3, 4],
    ]);
    expect((await until('double', id, finished)).status).toBe('succeeded');
    expect(await (await fetch(url(`/double/get?id=${id}`))).json()).toEqual([
      [2, 4],
      [6, 8],
    ]);
  });

  it('replays a multipart upload (its boundary kept) when the task runs', async () => {
    const form = () => {
      const data = new FormData();
      data.append('doc', new Blob([Buffer.from('héllo wörld')], { type: 'text/plain' }), 'notes ☃.txt');
      data.append('meta', JSON.stringify({ k: 1 }));
      return data;
    };
    const res = await fetch(url('/upload/submit'), { method: 'POST', body: form() });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    expect((await until('upload', id, finished)).status).toBe('succeeded');
    const got = await (await fetch(url(`/upload/get?id=${id}`))).json();
    expect(got).toMatchObject({ bytes: Buffer.byteLength('héllo wörld'), meta: { k: 1 } });
    expect(got).toEqual(await (await fetch(url('/upload'), { method: 'POST', body: form() })).json());
  });

  it('refuses a bad input at submit, as the synchronous API does, and stores nothing', async () => {
    const before = (svc.tasks as MemoryTaskStore).size;
    const res = await fetch(url('/count/submit'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"steps": 3',
    });
    expect(res.status).toBe(400);
    expect((svc.tasks as MemoryTaskStore).size).toBe(before);
  });

  it('a task that throws ends failed with the safe error body; the message stays in the log', async () => {
    const id = await submit('boom', {});
    const view = await until('boom', id, finished);
    expect(view.status).toBe('failed');
    expect(view.error?.code).toBe('INTERNAL_ERROR');
    expect(JSON.stringify(view)).not.toContain('/srv/secret');
    expect(JSON.stringify(handle.logs.records)).toContain('/srv/secret/db.sqlite');
    const events = await (await fetch(url(`/boom/events?id=${id}`))).text();
    expect(events).not.toContain('/srv/secret');
    const bad = await submit('boom', { bad: true });
    expect((await until('boom', bad, finished)).error).toMatchObject({
      code: 'BAD_INPUT',
      error: 'the input asked to fail',
    });
  });

  it('cancels a running task (twice is fine), a queued one at once; get before done is 409', async () => {
    const running = await submit('count', { steps: 400, ms: 5 });
    const queued = await submit('count', { steps: 1 });
    await until('count', running, (v) => v.status === 'running' && v.step >= 1);
    expect((await status('count', queued)).status).toBe('queued');
    const early = await fetch(url(`/count/get?id=${running}`));
    expect(early.status).toBe(409);
    expect(await code(early)).toBe('JOB_NOT_DONE');
    const cancelQueued = await fetch(url(`/count/cancel?id=${queued}`), { method: 'POST' });
    expect(((await cancelQueued.json()) as TaskView).status).toBe('cancelled');
    for (let k = 0; k < 2; k++) {
      const res = await fetch(url(`/count/cancel?id=${running}`), { method: 'POST' });
      expect(res.status).toBe(200);
    }
    const view = await until('count', running, finished);
    expect(view.status).toBe('cancelled');
    expect(view.step).toBeLessThan(400);
    expect(view.error?.code).toBe('CANCELLED');
    expect((await fetch(url(`/count/cancel?id=${running}`), { method: 'POST' })).status).toBe(200);
    expect((await status('count', running)).status).toBe('cancelled');
  });

  it('a task past its API timeout ends failed with 504 DEADLINE_EXCEEDED', async () => {
    const id = await submit('forever', {});
    const view = await until('forever', id, finished);
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({ type: 'GatewayTimeout', code: 'DEADLINE_EXCEEDED' });
    // Its work was told to stop, and the runner (one task at a time) runs the next task at once.
    expect(stoppedAtDeadline).toContain(id);
    const next = await submit('count', { steps: 1 });
    expect((await until('count', next, finished)).status).toBe('succeeded');
  });

  it('answers 4xx with a code for missing, empty, repeated, huge, non-ASCII and malformed ids', async () => {
    for (const op of ['status', 'get', 'events']) {
      for (const query of ['', '?id=', '?id=a&id=b']) {
        const res = await fetch(url(`/count/${op}${query}`));
        expect(res.status).toBe(400);
        expect(await code(res)).toBe('TASK_ID_REQUIRED');
      }
      const huge = await fetch(url(`/count/${op}?id=${'9'.repeat(10_000)}`));
      expect(huge.status).toBe(400);
      expect(await code(huge)).toBe('TASK_ID_INVALID');
      for (const id of ['%E2%98%83%F0%9F%90%88', '%ZZ%', 'nope', '..%2F..%2Fetc']) {
        const res = await fetch(url(`/count/${op}?id=${id}`));
        expect(res.status).toBe(404);
        expect(await code(res)).toBe('JOB_NOT_FOUND');
      }
    }
    const cancel = await fetch(url('/count/cancel?id=nope'), { method: 'POST' });
    expect(cancel.status).toBe(404);
    expect((await fetch(url('/count/cancel?id=nope'))).status).toBe(405);
  });

  it('frees the event-stream slot when a client disconnects from /events', async () => {
    const id = await submit('count', { steps: 60, ms: 5 });
    // Two slots (maxStreams 2): open and drop more streams than that, one after another.
    for (let k = 0; k < 4; k++) {
      const abort = new AbortController();
      const res = await fetch(url(`/count/events?id=${id}`), { signal: abort.signal });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      abort.abort();
      await sleep(20);
    }
    // Nothing stays subscribed once the clients left (the task is still running).
    expect((await status('count', id)).status).toBe('running');
    expect((svc.tasks as MemoryTaskStore).subscribers).toBe(0);
    expect((await until('count', id, finished)).status).toBe('succeeded');
  });

  it('lists the task routes in /docs.json', async () => {
    const doc = (await (await fetch(url('/docs.json'))).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/count',
        '/count/submit',
        '/count/status',
        '/count/get',
        '/count/cancel',
        '/count/events',
      ]),
    );
    expect(Object.keys(doc.paths['/count/submit'] ?? {})).toEqual(['post']);
    // The name (what clients map to the API's route) stays on the synchronous operation only.
    expect(doc.paths['/count']?.post).toMatchObject({ 'x-tiffin-name': 'count' });
    expect(doc.paths['/count/submit']?.post).not.toHaveProperty('x-tiffin-name');
    expect(doc.paths['/count/submit']?.post).toMatchObject({
      'x-tiffin-task': { api: 'count', operation: 'submit' },
      requestBody: expect.any(Object),
      responses: { '202': expect.any(Object) },
    });
    expect(Object.keys(doc.paths['/count/cancel'] ?? {})).toEqual(['post']);
  });
});

describe('a full task store', () => {
  let small: Service;
  let smallHandle: Handle;
  beforeAll(async () => {
    small = userService({ tasks: { maxTasks: 3, maxClientTasks: 3, resultTtl: 0.2 } });
    smallHandle = await start(small);
  });
  afterAll(async () => {
    await smallHandle?.close();
  });

  it('answers 503 JOBS_FULL while every slot is unfinished, and empties itself after the time to live', async () => {
    const submitTo = (body: unknown) =>
      fetch(`${smallHandle.url}/count/submit`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ids: string[] = [];
    for (let k = 0; k < 3; k++) {
      const res = await submitTo({ steps: 20, ms: 5 });
      expect(res.status).toBe(202);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const many = await Promise.all(Array.from({ length: 20 }, () => submitTo({ steps: 1 })));
    for (const res of many) {
      expect(res.status).toBe(503);
      expect(await code(res)).toBe('JOBS_FULL');
    }
    const store = small.tasks as MemoryTaskStore;
    expect(store.size).toBe(3);
    // Every task finishes, then is forgotten without anyone asking.
    for (;;) {
      const views = await Promise.all(ids.map((id) => store.status(id).catch(() => null)));
      if (views.every((v) => v === null || finished(v))) break;
      await sleep(20);
    }
    await sleep(400);
    expect(store.size).toBe(0);
    const gone = await fetch(`${smallHandle.url}/count/status?id=${ids[0]}`);
    expect(gone.status).toBe(404);
  });
});

describe('many submits at once', () => {
  it('runs every task, at most `concurrency` at a time, none left queued', async () => {
    let running = 0;
    let most = 0;
    const busy = new Service('busy', { tasks: { maxTasks: 40, maxClientTasks: 40, concurrency: 2 } }).api(
      { name: 'echo_later', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
      async (input) => {
        running++;
        most = Math.max(most, running);
        await sleep(20);
        running--;
        return input;
      },
    );
    const busyHandle = await start(busy);
    try {
      const ids = await Promise.all(
        Array.from({ length: 30 }, async (_, k) => {
          const res = await fetch(`${busyHandle.url}/echo_later/submit`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ k }),
          });
          expect(res.status).toBe(202);
          return ((await res.json()) as { id: string }).id;
        }),
      );
      for (const [k, id] of ids.entries()) {
        for (;;) {
          const view = await busy.tasks.status(id);
          if (finished(view)) break;
          await sleep(10);
        }
        expect(await (await fetch(`${busyHandle.url}/echo_later/get?id=${id}`)).json()).toEqual({ k });
      }
      expect(most).toBe(2);
    } finally {
      await busyHandle.close();
    }
  });
});

/** A JSON POST from a chosen loopback address (127.0.0.x), so the server sees distinct clients. */
function postFrom(
  localAddress: string,
  target: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('many submits from one client', () => {
  it("neither forgets another client's finished answer nor takes every slot", async () => {
    const shared = userService({ tasks: { maxTasks: 8, resultTtl: 600 } });
    const h = await start(shared);
    try {
      const first = await postFrom('127.0.0.2', `${h.url}/count/submit`, { steps: 1, ms: 1 });
      expect(first.status).toBe(202);
      const id = first.json.id as string;
      for (;;) {
        const view = (await (await fetch(`${h.url}/count/status?id=${id}`)).json()) as TaskView;
        if (view.status === 'succeeded') break;
        await sleep(10);
      }
      // 64 slow submits from another client: two (a quarter of 8) are taken, the rest answer 429.
      const flood = await Promise.all(
        Array.from({ length: 64 }, () =>
          postFrom('127.0.0.3', `${h.url}/count/submit`, { steps: 50, ms: 20 }),
        ),
      );
      const codes = flood.map((r) => (r.status === 202 ? 202 : r.json.code));
      expect(codes.filter((c) => c === 202)).toHaveLength(2);
      expect(codes.filter((c) => c === 'JOBS_CLIENT_FULL')).toHaveLength(62);
      // A third client still gets in, and the first one's answer is still there.
      expect((await postFrom('127.0.0.4', `${h.url}/count/submit`, { steps: 1 })).status).toBe(202);
      const kept = await fetch(`${h.url}/count/get?id=${id}`);
      expect(kept.status).toBe(201);
      expect(await kept.json()).toEqual({ counted: 1, task: id });
      for (const r of flood)
        if (r.status === 202)
          await fetch(`${h.url}/count/cancel?id=${r.json.id as string}`, { method: 'POST' });
    } finally {
      await h.close();
    }
  });
});
