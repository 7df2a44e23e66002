/**
 * Child process: a control for the zero-code bench. The plain server of `plain-onnx-server.ts` (same HTTP side,
 * `plain-onnx-http.ts`) with the model moved to one worker thread as a hand-written server would move it: one
 * message per call each way, calls queued on the main thread while the thread is busy. What it loses against
 * the plain server is what running the model on a second thread costs by itself, without Tiffin. Args: model path.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { type PlainTensor, servePlainOnnx } from './plain-onnx-http.js';

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

interface Job extends PlainTensor {
  id: number;
}
type Answer = { id: number; error: true } | Job;

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

servePlainOnnx(
  (x) =>
    new Promise<PlainTensor>((resolve, reject) => {
      const job: Job = { id: nextId++, ...x };
      pending.set(job.id, (answer) =>
        'error' in answer ? reject(new Error('model failed')) : resolve(answer),
      );
      queue.push(job);
      if (!busy) pump();
    }),
  // The thread's session is released before exit (tearing down a process with a live session aborts it).
  () =>
    new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.postMessage('close');
    }),
);
