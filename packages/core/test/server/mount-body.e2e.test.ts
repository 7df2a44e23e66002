import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Service } from '../../src/index.js';
import { PlainText, start } from './helpers.js';

// `ctx.state.body(maxBytes)`: a mounted route reads its body through the server's own reader (docs/server.md,
// your own routes): the mount's bound with the 413, the stall timeout with the 408, a declared size refused first.

let handle: Awaited<ReturnType<typeof start>> | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await handle?.close();
  handle = undefined;
});

const LIMIT = 1024;

function service(): Service {
  const svc = new Service('mount_body');
  svc.api({ input: new PlainText(), output: new PlainText() }, function echo(s: string) {
    return s;
  });
  svc.mount(async (ctx, next) => {
    if (ctx.path !== '/raw') return next();
    const bytes = await ctx.state.body(LIMIT);
    const again = await ctx.state.body(LIMIT);
    ctx.body = { bytes: bytes.length, same: again === bytes };
  });
  return svc;
}

/** A raw connection that sends `head` and `body` (then waits); resolves with everything read until it closes. */
function send(port: number, head: string, body: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.write(`${head}\r\n${body}`);
  let text = '';
  socket.on('data', (d) => {
    text += d.toString('latin1');
  });
  socket.on('error', () => {});
  return new Promise((resolve) => socket.on('close', () => resolve(text)));
}

const POST = 'POST /raw HTTP/1.1\r\nHost: x\r\n';

describe('ctx.state.body of a mounted route', () => {
  it('reads a whole body once', async () => {
    handle = await start(service());
    const res = await fetch(`${handle.url}/raw`, { method: 'POST', body: 'x'.repeat(LIMIT) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ bytes: LIMIT, same: true });
  });

  it('answers a chunked body that grows past the mount’s bound with the 413 JSON body', async () => {
    handle = await start(service());
    const chunk = 'y'.repeat(600);
    const body = `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(3);
    // On main: ctx.state.body is not there, so the route failed with a 500.
    const reply = await send(handle.port, `${POST}Transfer-Encoding: chunked\r\n`, body);
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toMatch(/"code":"PAYLOAD_TOO_LARGE"/);
    expect(reply).toContain(`exceeds the limit of ${LIMIT} bytes`);
  });

  it('refuses a declared content-length over the bound before a byte of the body is sent', async () => {
    handle = await start(service());
    // No body byte is ever sent: the answer can only come from the declared length.
    const reply = await send(handle.port, `${POST}Content-Length: 500000\r\n`, '');
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toMatch(/"code":"PAYLOAD_TOO_LARGE"/);
  });

  it('answers a body that stalls with the 408 and closes the connection', async () => {
    handle = await start(service(), { bodyTimeout: 1 });
    const reply = await send(handle.port, `${POST}Content-Length: 100\r\n`, '{');
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(reply).toMatch(/"code":"REQUEST_TIMEOUT"/);
    expect(reply.toLowerCase()).toContain('connection: close');
  });
});
