import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp, MemoryLogger, Service, silentLogger } from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

describe('lifecycle', () => {
  it('runs startup hooks before ready, drains in-flight requests on close, then runs shutdown hooks', async () => {
    const events: string[] = [];
    const svc = new Service('lifecycle');
    svc.onStartup(async ({ state }) => {
      await sleep(50);
      state.model = 'loaded';
      events.push('startup');
    });
    svc.onShutdown(() => {
      events.push('shutdown');
    });
    svc.api({ input: new PlainText(), output: new PlainText() }, async function slow(_input, ctx) {
      await sleep(300);
      events.push('handled');
      return String(ctx.state.model);
    });
    const server = await start(svc);
    expect(events).toEqual(['startup']);
    expect(server.app.lifecycle.isReady).toBe(true);
    const inFlight = fetch(`${server.url}/slow`, { method: 'POST', body: 'x' });
    await sleep(100);
    const closed = server.close();
    expect(server.app.lifecycle.isReady).toBe(false);
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('loaded');
    await closed;
    expect(events).toEqual(['startup', 'handled', 'shutdown']);
    await expect(fetch(`${server.url}/livez`)).rejects.toThrow();
  });

  it('fails /readyz with 503 (docs/spec/io-descriptors.md D4 body) before startup and while draining, /livez stays 200', async () => {
    const svc = new Service('readiness');
    svc.api({ input: new PlainText(), output: new PlainText() }, function echo(input) {
      return input;
    });
    const { app, lifecycle } = createApp(svc, { logger: silentLogger });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const before = await fetch(`${url}/readyz`);
      expect(before.status).toBe(503);
      expect(await before.json()).toMatchObject({ type: 'ServiceUnavailable' });
      expect((await fetch(`${url}/echo`, { method: 'POST', body: 'x' })).status).toBe(503);
      await lifecycle.startup();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${url}/echo`, { method: 'POST', body: 'x' })).text()).toBe('x');
      lifecycle.beginDrain();
      const draining = await fetch(`${url}/readyz`);
      expect(draining.status).toBe(503);
      expect(draining.headers.get('connection')).toBe('close');
      expect((await fetch(`${url}/livez`)).status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('logs start-up and draining 503s as plain request lines, not as errors with a stack', async () => {
    const svc = new Service('quiet-start');
    svc.api({ input: new PlainText(), output: new PlainText() }, function echo(input) {
      return input;
    });
    const logger = new MemoryLogger();
    const { app, lifecycle } = createApp(svc, { logger });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      expect((await fetch(`${url}/echo`, { method: 'POST', body: 'x' })).status).toBe(503);
      await lifecycle.startup();
      lifecycle.beginDrain();
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      const statuses = logger.records.filter((r) => r.msg === 'request').map((r) => r.status);
      expect(statuses).toEqual([503, 503, 503]);
      expect(logger.records.filter((r) => r.level === 'error' || 'stack' in r)).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('middleware put in front of the pipeline (as docs/server.md says) sees every request', async () => {
    const svc = new Service('wrapped');
    svc.api({ input: new PlainText(), output: new PlainText() }, function echo(input) {
      return input;
    });
    const { app, lifecycle } = createApp(svc, { logger: silentLogger });
    const seen: string[] = [];
    app.middleware.unshift(async (ctx, next) => {
      seen.push(ctx.path);
      await next();
      ctx.set('x-wrapped', 'yes');
    });
    await lifecycle.startup();
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const res = await fetch(`${url}/echo`, { method: 'POST', body: 'hi' });
      expect(await res.text()).toBe('hi');
      expect(res.headers.get('x-wrapped')).toBe('yes');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect((await fetch(`${url}/nope`)).status).toBe(404);
      expect(seen).toEqual(['/echo', '/nope']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('rejects serve() and closes when a startup hook fails', async () => {
    const svc = new Service('broken');
    svc.onStartup(() => {
      throw new Error('model file missing');
    });
    await expect(start(svc)).rejects.toThrow('model file missing');
  });
});
