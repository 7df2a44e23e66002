import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exchange } from '../../src/server/exchange.js';

/**
 * The exchange keeps response headers in its own list on the direct path and on `res` (Node's `setHeader`)
 * when the request came through Koa. Both must put the same head on the wire, and refuse the same bad input:
 * random sequences of header operations are run both ways and the raw responses compared.
 */

type Op =
  | { kind: 'set' | 'append'; name: string; value: string }
  | { kind: 'remove'; name: string }
  | { kind: 'vary'; name: string };

interface Outcome {
  /** The error code each refused operation threw, in order. */
  refused: string[];
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

const NAMES = ['x-a', 'X-A', 'x-b', 'Content-Type', 'set-cookie', 'Set-Cookie', 'vary', 'Cache-Control'];
/** Names and values HTTP cannot carry: a space or colon in a name, control characters, a newline in a value. */
const BAD_NAMES = ['bad name', 'x:y', ''];
const value = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.string({ unit: fc.constantFrom('a', 'B', '1', ' ', ';', '=', ',', 'é', '\t') }),
  },
  { weight: 1, arbitrary: fc.constantFrom('a\nb', `x${String.fromCharCode(1)}`, 'ok\r', `\u2028`) },
);
const name = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom(...NAMES) },
  { weight: 1, arbitrary: fc.constantFrom(...BAD_NAMES) },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), name, value }),
  fc.record({ kind: fc.constant('append' as const), name, value }),
  fc.record({ kind: fc.constant('remove' as const), name: fc.constantFrom(...NAMES) }),
  fc.record({
    kind: fc.constant('vary' as const),
    name: fc.constantFrom('Origin', 'accept', 'Accept-Encoding'),
  }),
);
const scenario = fc.record({
  ops: fc.array(op, { maxLength: 12 }),
  status: fc.constantFrom(200, 201, 204, 404),
  body: fc.constantFrom('', 'hello', 'héllo'),
});

/** The scenario each request carries, by id (the handler looks it up). */
const scenarios = new Map<string, { ops: Op[]; status: number; body: string; refused: string[] }>();

function apply(exchange: Exchange, o: Op): void {
  if (o.kind === 'set') exchange.set(o.name, o.value);
  else if (o.kind === 'append') exchange.append(o.name, o.value);
  else if (o.kind === 'remove') exchange.remove(o.name);
  else exchange.vary(o.name);
}

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const [, mode, id] = (req.url ?? '').split('/');
    const s = scenarios.get(id!)!;
    const exchange = new Exchange(req, res, { headersOnResponse: mode === 'koa' });
    if (mode === 'refusing') {
      // Node refusing a head the exchange let through (its rules drifting from ours): the first writeHead throws.
      const writeHead = res.writeHead.bind(res);
      let calls = 0;
      res.writeHead = ((...args: Parameters<typeof res.writeHead>) => {
        if (calls++ === 0) throw Object.assign(new TypeError('refused'), { code: 'ERR_INVALID_CHAR' });
        return writeHead(...args);
      }) as typeof res.writeHead;
    }
    for (const o of s.ops) {
      try {
        apply(exchange, o);
      } catch (err) {
        s.refused.push((err as { code?: string }).code ?? String(err));
      }
    }
    exchange.status = s.status;
    exchange.responseBody = s.body;
    exchange.respond((err) => s.refused.push(`respond: ${err.message}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

let nextId = 0;

function run(
  mode: 'direct' | 'koa' | 'refusing',
  s: { ops: Op[]; status: number; body: string },
): Promise<Outcome> {
  const id = String(nextId++);
  const refused: string[] = [];
  scenarios.set(id, { ...s, refused });
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/${mode}/${id}`, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i]!.toLowerCase() !== 'date')
            headers.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        }
        scenarios.delete(id);
        resolve({ refused, status: res.statusCode!, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('response headers held by the exchange', () => {
  it('put the same head on the wire as headers set on res, and refuse the same input', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const direct = await run('direct', s);
        const koa = await run('koa', s);
        expect(direct).toEqual(koa);
      }),
      { numRuns: 150 },
    );
  });

  it('answer the one 500 body when Node still refuses the head, instead of leaving the client waiting', async () => {
    const out = await run('refusing', {
      ops: [{ kind: 'set', name: 'x-a', value: '1' }],
      status: 200,
      body: 'secret',
    });
    expect(out.status).toBe(500);
    expect(out.refused).toEqual(['respond: refused']);
    expect(out.headers.map(([n]) => n.toLowerCase())).not.toContain('x-a');
    expect(JSON.parse(out.body)).toMatchObject({ code: 'INTERNAL_ERROR' });
  });

  it('refuse a value with a newline where it is set, with Node’s error code', async () => {
    const out = await run('direct', {
      ops: [{ kind: 'set', name: 'x-a', value: 'a\r\nx-injected: 1' }],
      status: 200,
      body: 'x',
    });
    expect(out.refused).toEqual(['ERR_INVALID_CHAR']);
    expect(out.headers.some(([n]) => n.toLowerCase() === 'x-injected')).toBe(false);
    expect(out.body).toBe('x');
  });
});
