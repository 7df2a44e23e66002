/**
 * Child process: a control for the zero-code bench. The plain server of `plain-onnx-server.ts` (same JSON, same
 * pino access line) with the model moved to one worker thread as a hand-written server would move it: one
 * message per call each way, calls queued on the main thread while the thread is busy. What it loses against
 * the plain server is what running the model on a second thread costs by itself, without Tiffin. Args: model path.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';

// The thread's code, as plain CommonJS (a TypeScript worker would need a loader in the thread).
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ort);
ort.InferenceSession.create(workerData.model, { intraOpNumThreads: 1, interOpNumThreads: 1 }).then((session) => {
  const input = session.inputNames[0];
  const output = session.outputNames[0];
  parentPort.on('message', (m) => {
    if (m === 'close') return void session.release().then(() => process.exit(0));
    session.run({ [input]: new ort.Tensor('float32', m.data, m.dims) }).then(
      (r) => { const y = r[output]; parentPort.postMessage({ id: m.id, data: y.data, dims: y.dims }, [y.data.buffer]); },
      () => parentPort.postMessage({ id: m.id, error: true }),
    );
  });
  parentPort.postMessage('ready');
});
`;

interface Answer {
  id: number;
  data?: Float32Array;
  dims?: number[];
  error?: true;
}
interface Job {
  id: number;
  data: Float32Array<ArrayBuffer>;
  dims: number[];
}

const logger = pino();
const worker = new Worker(THREAD, {
  eval: true,
  workerData: { ort: createRequire(import.meta.url).resolve('onnxruntime-node'), model: process.argv[2] },
});
await new Promise((resolve) => worker.once('message', resolve));
const pending = new Map<number, (answer: Answer) => void>();
const queue: Job[] = [];
let busy = false;
let nextId = 0;
const pump = () => {
  const job = queue.shift();
  busy = job !== undefined;
  if (job) worker.postMessage(job, [job.data.buffer]);
};
worker.on('message', (answer: Answer) => {
  pending.get(answer.id)?.(answer);
  pending.delete(answer.id);
  pump();
});

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
      const job: Job = {
        id: nextId++,
        data: Float32Array.from(nested.flat()),
        dims: [nested.length, nested[0]!.length],
      };
      pending.set(job.id, (answer) => {
        if (answer.error || !answer.data || !answer.dims)
          done(500, '{"error":"model failed"}', 'application/json');
        else done(200, JSON.stringify(rows(answer.data, answer.dims)), 'application/json');
      });
      queue.push(job);
      if (!busy) pump();
    } catch {
      done(400, '{"error":"bad input"}', 'application/json');
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
// The thread's session is released before exit (tearing down a process with a live session aborts it).
process.on('SIGTERM', () =>
  server.close(() => {
    worker.once('exit', () => process.exit(0));
    worker.postMessage('close');
  }),
);
