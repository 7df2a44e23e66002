/**
 * Diagnostic child process: the bare node:http echo plus, written by hand with nothing else around them, the
 * per-request features Tiffin's quiet `serve()` keeps: a request id (pooled random hex, echoed in
 * `x-request-id`), the nosniff header, a body size limit, a `close` listener that tracks requests in flight and
 * notices a client gone, the API function awaited (it may be async) under a deadline. It measures what these
 * features cost in Node's own code, with no framework structure: a floor for any server that offers them.
 * `BENCH_TIFFIN_SERVER=node-features-echo.ts` puts it in place of the quiet Tiffin server in the echo bench.
 */
import { randomFillSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const LIMIT = 1 << 20;
const pool = Buffer.allocUnsafe(8 * 512);
let poolHex = '';
let nextId = 512;
function requestId(): string {
  if (nextId === 512) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    nextId = 0;
  }
  const start = nextId++ * 16;
  return poolHex.slice(start, start + 16);
}

/** Deadlines: insertion-ordered, swept by one timer (the cheapest shape a per-request deadline can take). */
interface Pending {
  due: number;
  expire: () => void;
}
const pending = new Set<Pending>();
setInterval(() => {
  const now = performance.now();
  for (const p of pending) {
    if (p.due > now) break;
    pending.delete(p);
    p.expire();
  }
}, 100).unref();
let inFlight = 0;

const echo = (input: unknown): unknown => input;

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/echo') {
    res.statusCode = 404;
    res.end();
    return;
  }
  const startedAt = performance.now();
  const id = requestId();
  inFlight++;
  let gone = false;
  res.on('close', () => {
    inFlight--;
    if (!res.writableFinished) gone = true;
  });
  const chunks: Buffer[] = [];
  let received = 0;
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received <= LIMIT) chunks.push(chunk);
  });
  req.on('end', async () => {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const timer: Pending = { due: startedAt + 60_000, expire: () => {} };
    const output = await new Promise<unknown>((resolve) => {
      timer.expire = () => resolve(null);
      pending.add(timer);
      Promise.resolve(echo(value)).then(resolve);
    });
    pending.delete(timer);
    if (gone) return;
    const body = Buffer.from(JSON.stringify(output), 'utf8');
    res.writeHead(200, [
      'x-content-type-options',
      'nosniff',
      'content-length',
      String(body.length),
      'content-type',
      'application/json',
      'x-request-id',
      id,
    ]);
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(inFlight === 0 ? 0 : 1)));
