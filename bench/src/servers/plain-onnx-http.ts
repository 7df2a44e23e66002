/**
 * The HTTP side the zero-code bench's hand-written baselines share: `POST /predict` (nested lists in, nested lists
 * out), `GET /livez`, one pino access line per request with the fields of Tiffin's. Only where the model runs
 * differs between them (`plain-onnx-server.ts`, `plain-onnx-threaded-server.ts`).
 */
import { createServer } from 'node:http';
import { pino } from 'pino';

/** One float32 tensor: its values and its dims. */
export interface PlainTensor {
  data: Float32Array<ArrayBuffer>;
  dims: readonly number[];
}

function rows({ data, dims }: PlainTensor): number[][] {
  const width = dims[1]!;
  const out: number[][] = [];
  for (let r = 0; r < dims[0]!; r++) out.push(Array.from(data.subarray(r * width, (r + 1) * width)));
  return out;
}

/**
 * Listen on a free loopback port, print the URL on stdout, answer each request with `run`; on SIGTERM stop
 * listening, then `close` (free the model) and exit.
 */
export function servePlainOnnx(
  run: (x: PlainTensor) => Promise<PlainTensor>,
  close: () => Promise<void>,
): void {
  const logger = pino();
  let nextId = 0;
  const server = createServer((req, res) => {
    const started = performance.now();
    const done = (status: number, body: string, type: string) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
      logger.info(
        {
          requestId: (nextId++).toString(16),
          method: req.method,
          path: req.url,
          status,
          requestType: req.headers['content-type'],
          requestLength: req.headers['content-length'],
          responseType: type,
          ms: Math.round((performance.now() - started) * 1000) / 1000,
        },
        'request',
      );
    };
    if (req.method === 'GET' && req.url === '/livez') return done(200, 'ok', 'text/plain; charset=utf-8');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const nested = JSON.parse(Buffer.concat(chunks).toString('utf8')) as number[][];
        const x = { data: Float32Array.from(nested.flat()), dims: [nested.length, nested[0]!.length] };
        run(x).then(
          (y) => done(200, JSON.stringify(rows(y)), 'application/json'),
          () => done(500, '{"error":"model failed"}', 'application/json'),
        );
      } catch {
        done(400, '{"error":"bad input"}', 'application/json');
      }
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    process.stdout.write(`http://127.0.0.1:${address.port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => close().finally(() => process.exit(0))));
}
