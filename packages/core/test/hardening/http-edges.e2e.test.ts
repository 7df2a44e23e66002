import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON as JSONDescriptor, Service } from '../../src/index.js';
import { start } from '../server/helpers.js';

const svc = new Service('http_edges');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(v) {
  return v;
});

let handle: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  handle = await start(svc);
});
afterAll(async () => {
  await handle.close();
});

/** Send raw bytes on a fresh connection; resolve with everything the server wrote before closing. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(handle.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

const statusOf = (answer: string) => Number(answer.slice(9, 12));
const bodyOf = (answer: string) =>
  JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('answers before any route', () => {
  it('answers CONNECT with 405 and a JSON body', async () => {
    const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(statusOf(answer)).toBe(405);
    expect(answer).toMatch(/x-content-type-options: nosniff/i);
    expect(bodyOf(answer)).toMatchObject({ type: 'MethodNotAllowed' });
  });

  it('answers a method the HTTP parser does not know with 405', async () => {
    const answer = await raw('FROBNICATE /echo HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(statusOf(answer)).toBe(405);
    expect(bodyOf(answer)).toMatchObject({ type: 'MethodNotAllowed' });
  });

  it('answers a known but unrouted method with 405 and allow', async () => {
    const res = await fetch(`${handle.url}/echo`, { method: 'PROPFIND' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('answers malformed HTTP with 400 and oversized headers with 431', async () => {
    expect(statusOf(await raw('GET / HTTP/1.1\r\nHost x\r\n\r\n'))).toBe(400);
    expect(
      statusOf(
        await raw(
          'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n',
        ),
      ),
    ).toBe(400);
    expect(statusOf(await raw(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`))).toBe(
      431,
    );
    expect((await fetch(`${handle.url}/livez`)).status).toBe(200);
  });

  it('sends nosniff on every answer', async () => {
    const answers = await Promise.all([
      fetch(`${handle.url}/livez`),
      fetch(`${handle.url}/nowhere`),
      fetch(`${handle.url}/echo`, {
        method: 'POST',
        body: '{',
        headers: { 'content-type': 'application/json' },
      }),
      fetch(`${handle.url}/echo`, {
        method: 'POST',
        body: '[1]',
        headers: { 'content-type': 'application/json' },
      }),
      fetch(`${handle.url}/docs.json`),
      fetch(`${handle.url}/metrics`),
    ]);
    for (const res of answers) expect(res.headers.get('x-content-type-options'), res.url).toBe('nosniff');
    expect(answers.map((r) => r.status)).toEqual([200, 404, 400, 200, 200, 200]);
  });
});
