import { afterEach, describe, expect, it } from 'vitest';
import { Service } from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

function slowService(name: string, apiTimeout?: number) {
  const svc = new Service(name);
  const seen: { aborted: boolean } = { aborted: false };
  svc.api(
    { input: new PlainText(), output: new PlainText(), timeout: apiTimeout },
    async function echo_delay(input, ctx) {
      const ms = Number(input || '0');
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (ctx.request.signal.aborted) {
          seen.aborted = true;
          throw ctx.request.signal.reason;
        }
        await sleep(10);
      }
      return input;
    },
  );
  svc.api({ input: new PlainText(), output: new PlainText() }, function size(input) {
    return String(input.length);
  });
  return { svc, seen };
}

let handle: Awaited<ReturnType<typeof start>> | undefined;
afterEach(async () => {
  await handle?.close();
  handle = undefined;
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(handle!.url + path, { method: 'POST', body, headers: { 'content-type': 'text/plain', ...headers } });

describe('body size limit', () => {
  it('answers 413 with the docs/spec/io-descriptors.md D4 body over the limit and serves bodies at the limit', async () => {
    handle = await start(slowService('limit').svc, { maxBodySize: 1024 });
    const ok = await post('/size', 'a'.repeat(1024));
    expect(await ok.text()).toBe('1024');
    const tooBig = await post('/size', 'a'.repeat(4096));
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ type: 'PayloadTooLarge' });
  });

  it('answers 413 for a chunked body (no content-length) that grows past the limit', async () => {
    handle = await start(slowService('limit_chunked').svc, { maxBodySize: 1024 });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 8; i++) controller.enqueue(new Uint8Array(512).fill(97));
        controller.close();
      },
    });
    const res = await fetch(`${handle.url}/size`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'text/plain' },
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ type: 'PayloadTooLarge' });
  });
});

describe('max concurrency (docs/spec/io-descriptors.md D5)', () => {
  it('refuses the request over the limit with 503 + Retry-After while /livez still answers (case 65)', async () => {
    handle = await start(slowService('busy').svc, { maxConcurrency: 2, retryAfter: 3 });
    const first = post('/echo_delay', '800');
    const second = post('/echo_delay', '800');
    await sleep(200);
    const third = await post('/echo_delay', '10');
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('3');
    expect(third.headers.get('x-request-id')).toBeTruthy();
    expect(await third.json()).toMatchObject({ type: 'ServiceUnavailable' });
    for (const path of ['/livez', '/healthz', '/readyz', '/metrics']) {
      expect((await fetch(handle.url + path)).status).toBe(200);
    }
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await a.text()).toBe('800');
    // Permits come back once responses finish.
    expect((await post('/echo_delay', '1')).status).toBe(200);
  });
});

describe('timeout', () => {
  it('answers 504 with the docs/spec/io-descriptors.md D4 body and aborts the handler (case 64)', async () => {
    const { svc, seen } = slowService('slow');
    handle = await start(svc, { timeout: 0.3 });
    const res = await post('/echo_delay', '3000');
    expect(res.status).toBe(504);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await res.json()).toEqual({
      error: 'Not able to process the request in 0.3 seconds',
      type: 'GatewayTimeout',
      code: 'DEADLINE_EXCEEDED',
    });
    await sleep(100);
    expect(seen.aborted).toBe(true);
    // The server is still healthy afterwards.
    expect((await post('/echo_delay', '1')).status).toBe(200);
  });

  it('uses the per-API timeout over the server one, and its 504 stops the work', async () => {
    const { svc, seen } = slowService('slow_api', 0.2);
    handle = await start(svc, { timeout: 60 });
    const res = await post('/echo_delay', '20000');
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: 'Not able to process the request in 0.2 seconds' });
    // The function saw its signal and stopped (it checks every 10 ms): the next call is served at once.
    while (!seen.aborted) await sleep(5);
    expect(await (await post('/echo_delay', '1')).text()).toBe('1');
  });

  it('does not cut a streamed response that started in time (docs/spec/io-descriptors.md §10.5)', async () => {
    const svc = new Service('stream_timeout');
    svc.api({ input: new PlainText(), output: new PlainText() }, function slow_stream() {
      return (async function* () {
        for (let i = 0; i < 4; i++) {
          await sleep(150);
          yield String(i);
        }
      })();
    });
    handle = await start(svc, { timeout: 0.2 });
    const res = await post('/slow_stream', '');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('0123');
  });
});
