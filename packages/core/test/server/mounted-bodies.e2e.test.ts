import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { afterEach, describe, expect, it } from 'vitest';
import { Service } from '../../src/index.js';
import { PlainText, sleep, start } from './helpers.js';

// Bodies read by a mounted route's own parser (koa-body, formidable): they take no permit before they
// arrived, stall into a 408, and leave no upload behind in the temp folder.

let handle: Awaited<ReturnType<typeof start>> | undefined;
let uploads: string | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await handle?.close();
  handle = undefined;
  if (uploads) await rm(uploads, { recursive: true, force: true });
  uploads = undefined;
});

const TOKEN = 'secret-token';

function service(uploadDir: string): Service {
  const svc = new Service('mounted_bodies');
  svc.api({ input: new PlainText(), output: new PlainText() }, function echo(s: string) {
    return s;
  });
  const router = new Router();
  router.post('/hook', koaBody(), (ctx) => {
    ctx.body = { got: ctx.request.body };
  });
  router.post('/upload', koaBody({ multipart: true, formidable: { uploadDir } }), (ctx) => {
    const files = Object.values(ctx.request.files ?? {}).flat();
    ctx.body = { files: files.length };
  });
  // Public: answered without the token, as a webhook is.
  svc.mount(router.routes(), { public: true });
  return svc;
}

/** A raw connection that sends `head` and the start of its body, then stalls; resolves with the reply. */
function stalled(port: number, head: string, body: string): Promise<string> {
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

const callApi = (body: string) =>
  fetch(`${handle!.url}/echo`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'text/plain', authorization: `Bearer ${TOKEN}` },
  });

async function livez(): Promise<number> {
  const res = await fetch(`${handle!.url}/livez`);
  return res.status;
}

/** Polls until `dir` is empty (the test's own timeout bounds the wait). */
async function untilEmpty(dir: string): Promise<void> {
  while ((await readdir(dir)).length > 0) await sleep(50);
}

describe('bodies of mounted routes', () => {
  it('takes no permit for a mounted body before it arrived; a stalled one ends in 408', async () => {
    uploads = await mkdtemp(join(tmpdir(), 'tiffin-mounted-'));
    handle = await start(service(uploads), {
      maxConcurrency: 4,
      bodyTimeout: 1,
      apiToken: TOKEN,
    });
    const head =
      'POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n';
    const held = Array.from({ length: 16 }, () => stalled(handle!.port, head, '{'));
    await sleep(200);
    // On main: every authenticated API call 503 until the stalled bodies' deadline (60 s by default).
    const during = await Promise.all(Array.from({ length: 4 }, () => callApi('hi')));
    expect(during.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await livez()).toBe(200);
    // On main: no stall timeout for mounts, so these waited for the deadline (504).
    for (const reply of await Promise.all(held)) {
      expect(reply).toMatch(/^HTTP\/1\.1 408/);
      expect(reply).toMatch(/"code":"REQUEST_TIMEOUT"/);
    }
    // A whole body still reaches the route.
    const ok = await fetch(`${handle.url}/hook`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await ok.json()).toEqual({ got: { a: 1 } });
  });

  it('leaves no koa-body upload in the temp folder, the stalled one included', async () => {
    uploads = await mkdtemp(join(tmpdir(), 'tiffin-uploads-'));
    handle = await start(service(uploads), { bodyTimeout: 1 });
    for (let i = 0; i < 5; i++) {
      const form = new FormData();
      form.append('file', new Blob([Buffer.alloc(64 * 1024, i)]), `f${i}.bin`);
      const res = await fetch(`${handle.url}/upload`, { method: 'POST', body: form });
      expect(await res.json()).toEqual({ files: 1 });
    }
    // On main: all five stayed in the upload folder.
    await untilEmpty(uploads);
    const part =
      '--b\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n' +
      'content-type: application/octet-stream\r\n\r\n';
    const reply = stalled(
      handle.port,
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000\r\n',
      part + 'x'.repeat(32 * 1024),
    );
    // The partial file is written while the body stalls.
    while ((await readdir(uploads)).length === 0) await sleep(20);
    expect(await reply).toMatch(/^HTTP\/1\.1 408/);
    // On main: the stalled upload never ended, and its partial file stayed.
    await untilEmpty(uploads);
    expect(await livez()).toBe(200);
  });
});
