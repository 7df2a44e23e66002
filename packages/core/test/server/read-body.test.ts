import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BadInput, PayloadTooLarge, ServiceUnavailable } from '../../src/errors/index.js';
import { BodyBudget } from '../../src/runtime/body-budget.js';
import { readBody } from '../../src/server/read-body.js';

/** A server handing each request to `onRequest`, and the outcome of readBody for it to `outcomes`. */
async function serverReading(limit: number, budget?: BodyBudget) {
  const outcomes: Array<Buffer | Error> = [];
  /** Whether readBody listened for the body's data (it did not when the body came with its headers). */
  const listened: boolean[] = [];
  let notify: () => void = () => {};
  const server = createServer((req: IncomingMessage, res) => {
    readBody(
      req,
      limit,
      5000,
      budget?.open(() => {}),
    ).then(
      (body) => {
        // The streamed path leaves its listeners in place once the body is in.
        listened.push(req.listenerCount('data') > 0);
        outcomes.push(body);
        notify();
        res.end(`got ${body.length}`);
      },
      (err: Error) => {
        outcomes.push(err);
        notify();
        res.statusCode = err instanceof PayloadTooLarge ? 413 : err instanceof ServiceUnavailable ? 503 : 400;
        res.setHeader('connection', 'close');
        res.end(err.message);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const next = () => new Promise<void>((resolve) => (notify = resolve));
  return { server, port, outcomes, next, listened };
}

/** Write raw bytes on a fresh connection; resolves with everything the server sent back. */
function raw(port: number, parts: Array<string | Buffer>, { destroyAfter = false } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.on('data', (d) => {
      reply += d.toString();
    });
    socket.on('close', () => resolve(reply));
    socket.on('error', () => resolve(reply));
    socket.on('connect', async () => {
      for (const part of parts) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 10));
      }
      if (destroyAfter) socket.destroy();
    });
  });
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe('readBody', () => {
  it('joins a body sent in several chunks', async () => {
    const s = await serverReading(1024);
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\n',
      'hello ',
      'world',
    ]);
    expect(reply).toContain('got 11');
    expect((s.outcomes[0] as Buffer).toString()).toBe('hello world');
    expect(s.listened[0]).toBe(true);
  });

  it('refuses a declared length over the limit before reading', async () => {
    const s = await serverReading(8);
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n',
      'x'.repeat(100),
    ]);
    expect(reply).toMatch(/^HTTP\/1.1 413/);
    expect(s.outcomes[0]).toBeInstanceOf(PayloadTooLarge);
  });

  it('refuses a chunked body once it grows past the limit', async () => {
    const s = await serverReading(8);
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
      '5\r\nabcde\r\n',
      '5\r\nfghij\r\n',
      '0\r\n\r\n',
    ]);
    expect(reply).toMatch(/^HTTP\/1.1 413/);
    expect((s.outcomes[0] as Error).message).toBe('Request body exceeds the limit of 8 bytes');
  });

  it('a client that goes away mid-body is a BadInput', async () => {
    const s = await serverReading(1024);
    server = s.server;
    const seen = s.next();
    await raw(s.port, ['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n', 'only ten b'], {
      destroyAfter: true,
    });
    await seen;
    expect(s.outcomes[0]).toBeInstanceOf(BadInput);
    expect((s.outcomes[0] as Error).message).toBe('The client aborted the request body');
  });

  it('an empty body is an empty buffer', async () => {
    const s = await serverReading(1024);
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
    ]);
    expect(reply).toContain('got 0');
  });

  it('takes a body that came with its headers from the request at once, with no listener or timer', async () => {
    const s = await serverReading(1024);
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello world',
    ]);
    expect(reply).toContain('got 11');
    expect((s.outcomes[0] as Buffer).toString()).toBe('hello world');
    expect(s.listened[0]).toBe(false);
  });

  it('refuses a whole chunked body over the limit that came with its headers', async () => {
    const s = await serverReading(8);
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n5\r\nfghij\r\n0\r\n\r\n',
    ]);
    expect(reply).toMatch(/^HTTP\/1.1 413/);
    expect((s.outcomes[0] as Error).message).toBe('Request body exceeds the limit of 8 bytes');
  });

  it('refuses a whole body the body budget cannot hold with the 503', async () => {
    const s = await serverReading(1024, new BodyBudget(4, 1));
    server = s.server;
    const reply = await raw(s.port, [
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nConnection: close\r\n\r\nhello world',
    ]);
    expect(reply).toMatch(/^HTTP\/1.1 503/);
    expect((s.outcomes[0] as ServiceUnavailable).code).toBe('BODY_BUDGET_FULL');
  });
});
