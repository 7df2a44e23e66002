import Router from '@koa/router';
import { afterEach, describe, expect, it } from 'vitest';
import { Service, Text } from '../../src/index.js';
import type { MountState } from '../../src/server/mount/mounted-handler.js';
import { start } from './helpers.js';

/** Work of `ms` milliseconds that stops when `signal` fires (as a model run honouring it would). */
function work(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * A service whose mounted routes share one single-slot resource (a generator, say): `GET <prefix>/job?ms=`
 * holds the slot for that long, unless the request's signal stops it; `GET <prefix>/slot` says whether it is
 * free; every abort the work saw is kept, with its reason's code.
 */
function slotService(mounts: Array<{ prefix: string; timeout?: number }>, leadMs = 0) {
  const svc = new Service('slots');
  svc.api({ input: new Text(), output: new Text() }, function echo(text) {
    return text;
  });
  const state = { busy: false, aborts: [] as string[] };
  // A first mount that looks something up before passing every request on (an auth check, a session).
  if (leadMs > 0)
    svc.mount(async (_ctx, next) => {
      await new Promise((r) => setTimeout(r, leadMs));
      await next();
    });
  for (const { prefix, timeout } of mounts) {
    const router = new Router<MountState>({ prefix });
    router.get('/job', async (ctx) => {
      if (state.busy) {
        ctx.status = 409;
        ctx.body = 'busy';
        return;
      }
      state.busy = true;
      const signal = ctx.state.signal;
      signal?.addEventListener('abort', () => {
        state.aborts.push((signal.reason as { code?: string }).code ?? String(signal.reason));
      });
      try {
        await work(Number(ctx.query.ms), signal);
        ctx.body = 'done';
      } finally {
        state.busy = false;
      }
    });
    router.get('/slot', (ctx) => {
      ctx.body = state.busy ? 'busy' : 'free';
    });
    svc.mount(router.routes(), timeout === undefined ? {} : { timeout });
  }
  return { svc, state };
}

let handle: Awaited<ReturnType<typeof start>> | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
});

const get = async (path: string): Promise<[number, string]> => {
  const res = await fetch(handle!.url + path);
  return [res.status, await res.text()];
};

describe('mounted routes: the request abort signal (ctx.state.signal)', () => {
  it("fires at the route's 504, so the work it started stops and the next call is served at once", async () => {
    const { svc, state } = slotService([{ prefix: '/gen' }]);
    handle = await start(svc, { timeout: 0.3 });
    const [status, body] = await get('/gen/job?ms=20000');
    expect([status, JSON.parse(body).code]).toEqual([504, 'DEADLINE_EXCEEDED']);
    expect(state.aborts).toEqual(['DEADLINE_EXCEEDED']);
    // The slot is free again: a call right after the 504 is served, long before the 20 s work would have ended.
    expect(await get('/gen/slot')).toEqual([200, 'free']);
    expect(await get('/gen/job?ms=1')).toEqual([200, 'done']);
  });

  it('fires when the client goes away', async () => {
    const { svc, state } = slotService([{ prefix: '/gen' }]);
    handle = await start(svc, { timeout: 30 });
    const client = new AbortController();
    const gone = fetch(`${handle.url}/gen/job?ms=20000`, { signal: client.signal }).catch(() => 'gone');
    while ((await get('/gen/slot'))[1] !== 'busy') await new Promise((r) => setTimeout(r, 10));
    client.abort();
    expect(await gone).toBe('gone');
    while ((await get('/gen/slot'))[1] !== 'free') await new Promise((r) => setTimeout(r, 10));
    expect(state.aborts).toEqual(['Error: client disconnected']);
  });
});

describe("mounted routes: a mount's own timeout is its deadline", () => {
  it("cuts a route at its mount's shorter timeout, not at the server's longer one", async () => {
    const { svc, state } = slotService([{ prefix: '/gen', timeout: 0.3 }]);
    handle = await start(svc, { timeout: 30 });
    // 5 s of work: within the server's 30 s, past the mount's 0.3 s.
    expect(await get('/gen/job?ms=5000')).toEqual([504, expect.stringContaining('in 0.3 seconds')]);
    expect(state.aborts).toEqual(['DEADLINE_EXCEEDED']);
    expect(await get('/gen/slot')).toEqual([200, 'free']);
    expect(await get('/gen/job?ms=1')).toEqual([200, 'done']);
    // The APIs and the built-in routes keep the server's deadline.
    expect((await fetch(`${handle.url}/echo`, { method: 'POST', body: 'hi' })).status).toBe(200);
  });

  for (const [name, options] of [
    ['', {}],
    [' (with CORS, and a mount that awaits before passing requests on)', { cors: { enabled: true } }],
  ] as const) {
    it(`gives each mount its own: longer or shorter than the server's, or the server's when it has none${name}`, async () => {
      const { svc, state } = slotService(
        [{ prefix: '/long', timeout: 3 }, { prefix: '/mid', timeout: 1 }, { prefix: '/plain' }],
        name ? 50 : 0,
      );
      handle = await start(svc, { timeout: 0.3, ...options });
      // Past the server's 0.3 s, within its mount's 3 s: served.
      expect(await get('/long/job?ms=800')).toEqual([200, 'done']);
      // Past its mount's 1 s, within the 3 s another mount declares: cut at its own.
      expect(await get('/mid/job?ms=2500')).toEqual([504, expect.stringContaining('in 1 seconds')]);
      // A mount without a timeout has the server's, whatever other mounts declare.
      expect(await get('/plain/job?ms=2500')).toEqual([504, expect.stringContaining('in 0.3 seconds')]);
      expect(state.aborts).toEqual(['DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED']);
      expect(await get('/plain/slot')).toEqual([200, 'free']);
    });
  }
});
