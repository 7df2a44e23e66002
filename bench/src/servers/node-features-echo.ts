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
/** `FLOOR_WITHOUT=close,deadline,headers` (any of them) leaves features out, to price each one. */
const without = new Set(process.env.FLOOR_WITHOUT?.split(',') ?? []);
const NO_CLOSE = without.has('close');
const NO_DEADLINE = without.has('deadline');
const NO_HEADERS = without.has('headers');
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

/**
 * Deadlines, all of one length (so in arrival order): a FIFO array with a head index, swept by one timer. A
 * settled entry is marked and the settled prefix skipped at once, so entries die young; the array drops that
 * prefix now and then.
 */
interface Pending {
  due: number;
  expire: (() => void) | null;
}
let queue: Pending[] = [];
let head = 0;
function skipSettled(): void {
  while (head < queue.length && queue[head]!.expire === null) head++;
  if (head === queue.length) {
    queue = [];
    head = 0;
  } else if (head >= 1024 && head * 2 >= queue.length) {
    queue.splice(0, head);
    head = 0;
  }
}
setInterval(() => {
  const now = performance.now();
  while (head < queue.length && queue[head]!.due <= now) queue[head++]!.expire?.();
  skipSettled();
}, 100).unref();
let inFlight = 0;
const EXPIRED = Symbol('expired');

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
  if (!NO_CLOSE)
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
    let output: unknown;
    if (NO_DEADLINE) output = echo(value);
    else {
      const timer: Pending = { due: startedAt + 60_000, expire: null };
      output = await new Promise<unknown>((resolve) => {
        timer.expire = () => resolve(EXPIRED);
        queue.push(timer);
        Promise.resolve(echo(value)).then(resolve);
      });
      timer.expire = null;
      skipSettled();
    }
    if (gone) return;
    if (output === EXPIRED) {
      res.writeHead(504, ['content-type', 'application/json', 'x-request-id', id]);
      res.end('{"error":"timed out","code":"TIMEOUT"}');
      return;
    }
    const body = Buffer.from(JSON.stringify(output), 'utf8');
    // One flat list, no spread: the floor should cost no more than the features themselves.
    const headers = ['content-length', String(body.length), 'content-type', 'application/json'];
    if (!NO_HEADERS) headers.push('x-request-id', id, 'x-content-type-options', 'nosniff');
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(inFlight === 0 ? 0 : 1)));
