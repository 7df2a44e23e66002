import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Service, Text } from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

// Sockets that send headers declaring a body and never send it held every API permit.

let handle: Awaited<ReturnType<typeof start>> | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await handle?.close();
  handle = undefined;
});

function service(): Service {
  const svc = new Service('slow_clients');
  svc.api({ input: new PlainText(), output: new PlainText() }, function echo(s: string) {
    return s;
  });
  svc.api(
    { input: new PlainText(), output: new Text({ content_type: 'text/event-stream' }) },
    async function* events(_: string, ctx) {
      // An event stream that sends one event, then waits for events that never come (as /progress does).
      yield 'data: open\n\n';
      await new Promise<void>((resolve) => ctx.request.signal.addEventListener('abort', () => resolve()));
    },
  );
  return svc;
}

/** A raw connection that sends the request head (and `body`), resolving with what the server answers. */
function stalled(port: number, path: string, head: string, body = ''): { reply: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\n${head}\r\n${body}`);
  let text = '';
  socket.on('data', (d) => {
    text += d.toString('latin1');
  });
  socket.on('error', () => {});
  return { reply: new Promise((resolve) => socket.on('close', () => resolve(text))) };
}

const post = (path: string, body: string) =>
  fetch(handle!.url + path, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });

describe('clients that stall', () => {
  it('takes no API permit before the body is in: stalled bodies never lock the APIs out, and end with 408', async () => {
    handle = await start(service(), { maxConcurrency: 4, bodyTimeout: 1 });
    const { port } = handle;
    const held = Array.from({ length: 16 }, () =>
      stalled(port, '/echo', 'Content-Type: text/plain\r\nContent-Length: 100\r\n'),
    );
    await sleep(100);
    // On main: 503 (all 4 permits held by the stalled sockets) for as long as they stay.
    const during = await Promise.all(Array.from({ length: 4 }, () => post('/echo', 'hi')));
    expect(during.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await fetch(`${handle.url}/livez`)).status).toBe(200);
    const replies = await Promise.all(held.map((h) => h.reply));
    for (const reply of replies) {
      expect(reply).toMatch(/^HTTP\/1\.1 408/);
      expect(reply).toMatch(/"code":"REQUEST_TIMEOUT"/);
    }
  });

  it('closes a connection that never finishes its headers after headersTimeout', async () => {
    handle = await start(service(), { headersTimeout: 1 });
    // The head never ends (no blank line): Node answers 408 and closes once headersTimeout passed.
    const { reply } = stalled(handle.port, '/echo', 'Content-Type: text/plain');
    const text = await reply;
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(text).toMatch(/"code":"REQUEST_TIMEOUT"/);
  });

  it('keeps event streams outside the API gate, on their own cap, and ends idle streams', async () => {
    handle = await start(service(), { maxConcurrency: 2, maxStreams: 3, streamIdleTimeout: 1 });
    const streams = await Promise.all(Array.from({ length: 3 }, () => post('/events', '')));
    for (const s of streams) expect(s.status).toBe(200);
    // The streams are open and waiting, yet the API gate (2) is free: on main both permits were held.
    expect((await post('/echo', 'a')).status).toBe(200);
    expect((await post('/echo', 'b')).status).toBe(200);
    // A fourth stream is over the stream cap.
    const over = await post('/events', '');
    expect(over.status).toBe(503);
    expect(await over.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    // Idle for a second: the server ends each stream (the client reconnects), after its first event.
    const texts = await Promise.all(streams.map((s) => s.text()));
    for (const text of texts) expect(text).toBe('data: open\n\n');
    // Their slots are free again.
    const again = await post('/events', '');
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });

  it('ends an event stream at its lifetime even while it sends events', async () => {
    const svc = new Service('chatty');
    svc.api(
      { input: new PlainText(), output: new Text({ content_type: 'text/event-stream' }) },
      async function* ticks(_: string, ctx) {
        while (!ctx.request.signal.aborted) {
          yield 'data: tick\n\n';
          await sleep(50);
        }
      },
    );
    handle = await start(svc, { streamIdleTimeout: 10, streamLifetime: 1 });
    const text = await (await post('/ticks', '')).text();
    expect(text.split('data: tick').length - 1).toBeGreaterThan(1);
  });
});
