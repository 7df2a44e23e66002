/**
 * Child process: the baseline for zero-code ONNX serving, a plain node:http server around onnxruntime-node
 * answering the same JSON as `tiffin serve model.onnx` (`POST /predict`: nested lists in, nested lists out;
 * `GET /livez`) and writing the same JSON access line per request with pino. The model runs on the main
 * thread with one intra-op thread, as a hand-written server would run it. Args: model path.
 */
import { createServer } from 'node:http';
import * as ort from 'onnxruntime-node';
import { pino } from 'pino';

const logger = pino();
const session = await ort.InferenceSession.create(process.argv[2]!, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
});
const input = session.inputNames[0]!;
const output = session.outputNames[0]!;
let nextId = 0;

function rows(data: Float32Array, dims: readonly number[]): number[][] {
  const width = dims[1]!;
  const out: number[][] = [];
  for (let r = 0; r < dims[0]!; r++) out.push(Array.from(data.subarray(r * width, (r + 1) * width)));
  return out;
}

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
      const data = Float32Array.from(nested.flat());
      const tensor = new ort.Tensor('float32', data, [nested.length, nested[0]!.length]);
      session.run({ [input]: tensor }).then(
        (result) => {
          const y = result[output]!;
          done(200, JSON.stringify(rows(y.data as Float32Array, y.dims)), 'application/json');
        },
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
process.on('SIGTERM', () => server.close(() => process.exit(0)));
