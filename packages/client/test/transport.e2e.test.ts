import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, TiffinClientError } from '../src/index.js';
import { retryAfterMs } from '../src/transport.js';

/** A hand-written server: its /docs.json names a Text API and a Multipart one, answered as each test sets up. */
const DOCS = {
  openapi: '3.0.2',
  info: { title: 't', version: '1' },
  paths: {
    '/v1/echo': {
      post: {
        'x-tiffin-name': 'echo',
        requestBody: { content: {}, 'x-tiffin-wire': { form: 'text' } },
        responses: { '200': { description: 'ok', 'x-tiffin-wire': { form: 'text' } } },
      },
    },
    '/v1/parts': {
      post: {
        'x-tiffin-name': 'parts',
        requestBody: { content: {}, 'x-tiffin-wire': { form: 'text' } },
        responses: {
          '200': {
            description: 'ok',
            'x-tiffin-wire': { form: 'multipart', parts: { a: { form: 'text' } } },
          },
        },
      },
    },
  },
};

interface Seen {
  at: number;
  authorization: string | undefined;
  body: string;
}

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let answer: (req: IncomingMessage, res: ServerResponse, attempt: number) => void;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.url === '/prefix/docs.json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(DOCS));
      return;
    }
    seen.push({
      at: Date.now(),
      authorization: req.headers.authorization,
      body: Buffer.concat(chunks).toString(),
    });
    answer(req, res, seen.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
});

const unavailable = (res: ServerResponse, retryAfter: string | null) => {
  res.statusCode = 503;
  if (retryAfter !== null) res.setHeader('retry-after', retryAfter);
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ error: 'busy', type: 'ServiceUnavailable', code: 'SERVICE_UNAVAILABLE' }));
};

describe('client transport', () => {
  it('sends the bearer token, keeps the base path, and reads the route from /docs.json', async () => {
    answer = (_req, res) => res.end('ok');
    const client = createClient({ baseUrl, token: 's3cret' });
    expect(await client.echo('hi')).toBe('ok');
    expect(seen).toMatchObject([{ authorization: 'Bearer s3cret', body: 'hi' }]);
  });

  it('retries a 503 after the delay its Retry-After asks for, then succeeds', async () => {
    answer = (_req, res, attempt) => (attempt === 1 ? unavailable(res, '1') : res.end('done'));
    const client = createClient({ baseUrl, retries: 2 });
    expect(await client.echo('x')).toBe('done');
    expect(seen).toHaveLength(2);
    // The wait is the server's ask (1 s), not the client's backoff (0.1 s).
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900);
    expect(seen[1]!.body).toBe('x');
  });

  it('gives up after `retries` and throws the 503 with its type and code', async () => {
    answer = (_req, res) => unavailable(res, '0');
    const client = createClient({ baseUrl, retries: 1 });
    const err = (await client.echo('x').catch((e: unknown) => e)) as TiffinClientError;
    expect(seen).toHaveLength(2);
    expect(err).toMatchObject({
      kind: 'http',
      status: 503,
      type: 'ServiceUnavailable',
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(err.message).toContain('busy');
  });

  it('times out a call (a timeout error, not a hang) and does not retry past the timeout', async () => {
    answer = () => {
      // Never answers.
    };
    const client = createClient({ baseUrl, timeoutMs: 200 });
    await expect(client.echo('x')).rejects.toMatchObject({ kind: 'timeout' });
    answer = (_req, res) => unavailable(res, '60');
    await expect(client.echo('x')).rejects.toMatchObject({ kind: 'timeout' });
  });

  it('reports a non-JSON error body as its text, and a refused connection as a network error', async () => {
    answer = (_req, res) => {
      res.statusCode = 502;
      res.end('<html>bad gateway</html>');
    };
    const client = createClient({ baseUrl, retries: 0 });
    await expect(client.echo('x')).rejects.toMatchObject({
      status: 502,
      type: undefined,
      message: /bad gateway/,
    });
    const nowhere = createClient({ baseUrl: 'http://127.0.0.1:1' });
    await expect(nowhere.echo('x')).rejects.toMatchObject({ kind: 'network' });
  });

  it('a body that breaks off is a network error; multipart that does not parse is a protocol error', async () => {
    const client = createClient({ baseUrl, retries: 0 });
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('only part of it');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    await expect(client.echo('x')).rejects.toMatchObject({ name: 'TiffinClientError', kind: 'network' });
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'multipart/form-data; boundary=zz' });
      res.end('--zz\r\ncontent-disposition: form-data; name="a"\r\n\r\nno closing boundary');
    };
    await expect(client.parts('x')).rejects.toMatchObject({ name: 'TiffinClientError', kind: 'protocol' });
  });

  it('rejects a bad baseUrl and a wrong argument type before sending', async () => {
    expect(() => createClient({ baseUrl: 'ftp://x' })).toThrow(TiffinClientError);
    const client = createClient({ baseUrl });
    await expect(client.echo(42)).rejects.toMatchObject({ kind: 'usage' });
    expect(seen).toHaveLength(0);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});
