import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSONDescriptor, type MemoryLogger, type ServerHandle, Service } from '../../src/index.js';
import { start } from './helpers.js';

/**
 * `ctx.state.queue(api)` (docs/server.md, queues): a group's route that does an API's work waits in that API's
 * queue beside its calls, by `Priority` and then arrival, holds its slot until the request ends, and past the
 * bound is refused as a call is (503 `API_QUEUE_FULL`, `Retry-After`) through the group's error mapper; for an
 * API without a queue of its own it goes on at once.
 */
const started: string[] = [];
let open: () => void = () => {};
let gate = new Promise<void>((resolve) => {
  open = resolve;
});

let handle: ServerHandle & { logs: MemoryLogger };
beforeAll(async () => {
  const svc = new Service('queued_routes');
  svc.api(
    {
      input: new JSONDescriptor(),
      output: new JSONDescriptor(),
      concurrency: 1,
      queue: 2,
      queuePerClient: 2,
    },
    async function paint(input) {
      const { id } = input as { id: string };
      started.push(id);
      await gate;
      return { id };
    },
  );
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function free() {
    return { free: true };
  });
  svc.group({
    prefix: '/compat',
    errors: ({ status, body }) => ({ status, body: { failed: body.code } }),
    routes: {
      '/compat/paint': {
        POST: async (ctx) => {
          const { id } = JSON.parse((await ctx.state.body()).toString('utf8')) as { id: string };
          await ctx.state.queue('paint');
          started.push(id);
          await gate;
          return { id, via: 'compat' };
        },
      },
      '/compat/free': {
        GET: async (ctx) => {
          await ctx.state.queue('free');
          return { went: 'at once' };
        },
      },
    },
  });
  handle = await start(svc);
});
afterAll(async () => {
  await handle?.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${handle.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function depth(): Promise<number> {
  const text = await (await fetch(`${handle.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('tiffin_api_server_queue_depth{api_name="paint"'));
  return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? Number.NaN);
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('ctx.state.queue', () => {
  it('goes on at once for an API without a queue of its own', async () => {
    const res = await fetch(`${handle.url}/compat/free`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ went: 'at once' });
  });

  it("waits in the API's queue by Priority beside its calls, and past the bound is refused in the group's shape", async () => {
    const first = post('/paint', { id: 'call' });
    await until(() => started.length === 1);
    const low = post('/compat/paint', { id: 'route u=7' }, { priority: 'u=7' });
    await until(async () => (await depth()) === 1);
    const high = post('/paint', { id: 'call u=0' }, { priority: 'u=0' });
    await until(async () => (await depth()) === 2);

    const refused = await post('/compat/paint', { id: 'refused' });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toEqual({ failed: 'API_QUEUE_FULL' });

    open();
    expect((await Promise.all([first, low, high])).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(started).toEqual(['call', 'call u=0', 'route u=7']);
    // The route's slot was given back when its request ended: the queue is free again.
    expect((await post('/compat/paint', { id: 'after' })).status).toBe(200);
  });

  it("counts a Tiffin-Timeout over the wait: a queued route's deadline passes and it never starts", async () => {
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    started.length = 0;
    const first = post('/compat/paint', { id: 'holder' });
    await until(() => started.length === 1);
    const late = await post('/compat/paint', { id: 'expires' }, { 'tiffin-timeout': '0.2' });
    expect(late.status).toBe(504);
    expect(await late.json()).toEqual({ failed: 'DEADLINE_EXCEEDED' });
    const bad = await post('/compat/paint', { id: 'bad' }, { 'tiffin-timeout': 'soon' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ failed: 'INVALID_TIMEOUT' });
    open();
    expect((await first).status).toBe(200);
    expect(started).toEqual(['holder']);
  });

  it('gives up the place of a request whose client leaves while it waits: it never starts, and is no 500', async () => {
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    started.length = 0;
    const since = handle.logs.records.length;
    const first = post('/compat/paint', { id: 'holder' });
    await until(() => started.length === 1);
    // A route and a call of the API queue behind it; their clients destroy their sockets while they wait.
    for (const [path, id] of [
      ['/compat/paint', 'route left'],
      ['/paint', 'call left'],
    ]) {
      const payload = JSON.stringify({ id });
      const req = request(`${handle.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(payload.length) },
      });
      req.on('error', () => {});
      req.end(payload);
      await until(async () => (await depth()) === 1);
      req.destroy();
      await until(async () => (await depth()) === 0);
      expect(await depth()).toBe(0);
    }
    const next = post('/compat/paint', { id: 'next' });
    await until(async () => (await depth()) === 1);
    open();
    expect((await first).status).toBe(200);
    expect((await next).status).toBe(200);
    expect(started).toEqual(['holder', 'next']);
    // Answered to nobody as cancelled (409 CANCELLED), never logged as the server's fault.
    const records = handle.logs.records.slice(since);
    const lines = records.filter((r) => r.msg === 'request' && r.status === 409);
    expect(lines.map((r) => r.path)).toEqual(['/compat/paint', '/paint']);
    expect(records.filter((r) => r.level === 'error' || Number(r.status) >= 500)).toEqual([]);
  });
});
