import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Service, Text } from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

// Clients that ask for an answer and never read it: the send deadline closes their connections, so their
// permits, stream slots and the answers' memory come back while other callers keep being answered.

let handle: Awaited<ReturnType<typeof start>> | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await handle?.close();
  handle = undefined;
});

const ANSWER_BYTES = 4 * 1024 * 1024;

function service(): Service {
  const svc = new Service('slow_readers');
  svc.api({ input: new PlainText(), output: new PlainText() }, function echo(s: string) {
    return s;
  });
  svc.api({ input: new PlainText(), output: new PlainText() }, function big() {
    return 'x'.repeat(ANSWER_BYTES);
  });
  svc.api(
    { input: new PlainText(), output: new Text({ content_type: 'text/event-stream' }) },
    async function* previews(_: string, ctx) {
      // Large events (previews), made only as the stream is pulled; never-ending until the server ends it.
      const event = `data: ${'p'.repeat(256 * 1024)}\n\n`;
      while (!ctx.request.signal.aborted) yield event;
    },
  );
  return svc;
}

/** A connection that sends one request and never reads (so it never sees the server close it either). */
function neverReads(port: number, path: string): void {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.pause();
  socket.on('error', () => {});
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n\r\nx`);
}

/** Responses the send deadline cut off so far, for `reason`. */
async function cut(reason: string): Promise<number> {
  const metrics = await (await fetch(`${handle!.url}/metrics`)).text();
  const line = new RegExp(`tiffin_api_server_responses_cut_total\\{reason="${reason}"[^}]*\\} (\\d+)`);
  return Number(metrics.match(line)?.[1] ?? 0);
}

/** Polls `probe` until it returns `want` (the test's own timeout bounds the wait). */
async function until<T>(probe: () => Promise<T>, want: T): Promise<void> {
  while ((await probe()) !== want) await sleep(100);
}

const post = (path: string, body: string) =>
  fetch(handle!.url + path, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });

async function livezMs(): Promise<number> {
  const begin = performance.now();
  const res = await fetch(`${handle!.url}/livez`);
  expect(res.status).toBe(200);
  return performance.now() - begin;
}

describe('slow readers', () => {
  it('closes connections that never read a large answer, so their permits come back', async () => {
    handle = await start(service(), { maxConcurrency: 4, sendTimeout: 1 });
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 4; i++) neverReads(handle.port, '/big');
    await sleep(200);
    // The readers hold every permit: API calls are refused now, probes answer.
    expect((await post('/echo', 'during')).status).toBe(503);
    await livezMs();
    // On main: that 503 lasted as long as the readers held (for good); here until the send deadline.
    await until(() => cut('stalled'), 4);
    const after = await Promise.all(Array.from({ length: 4 }, () => post('/echo', 'hi')));
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await livezMs();
    // Nothing of theirs is held: their 4 MiB answers are gone with their connections.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(4 * ANSWER_BYTES);
  });

  it('ends unread event streams at their lifetime, while other callers are answered', async () => {
    handle = await start(service(), { maxStreams: 2, sendTimeout: 60, streamLifetime: 1 });
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 2; i++) neverReads(handle.port, '/previews');
    await sleep(200);
    expect((await post('/echo', 'during')).status).toBe(200);
    await livezMs();
    // On main: the stream's timers ran only while the client read, so these stayed open (and the stream
    // cap full) for good.
    await until(() => cut('deadline'), 2);
    const again = await post('/previews', '');
    expect(again.status).toBe(200);
    await again.body?.cancel();
    // Each stream buffered at most a few events (256 KiB each) while nobody read: backpressure held.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});
