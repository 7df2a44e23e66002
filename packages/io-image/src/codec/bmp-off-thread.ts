import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import type { DecodedBmp } from './bmp.js';

/*
 * BMP decoding off the event loop. libvips cannot read BMP, so bmp-ts (plain JavaScript) decodes it: run on the
 * main thread, one 9456×9456 RLE file held the loop for 0.6 s (issue 32). Here bmp-ts runs in worker threads
 * (a few, reused), and the per-pixel work after it (the alpha test, RGBA → RGB) is sharp's, on libuv's pool.
 */

/** The worker: bmp-ts's CommonJS build, one file at a time; the RGBA pixels are transferred, not copied. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { decode } = require(workerData.bmpTs);
parentPort.on('message', ({ id, bytes }) => {
  try {
    const d = decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { toRGBA: true });
    let data = new Uint8Array(d.data.buffer, d.data.byteOffset, d.data.byteLength);
    if (data.byteLength !== data.buffer.byteLength) data = data.slice();
    parentPort.postMessage({ id, width: d.width, height: d.height, bitPP: d.bitPP, data }, [data.buffer]);
  } catch {
    parentPort.postMessage({ id, failed: true });
  }
});
`;

interface WorkerAnswer {
  id: number;
  failed?: boolean;
  width: number;
  height: number;
  bitPP: number;
  data: Uint8Array;
}

interface Job {
  bytes: Uint8Array;
  resolve: (answer: WorkerAnswer) => void;
  reject: (err: Error) => void;
}

const MAX_WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1));
const bmpTs = createRequire(import.meta.url).resolve('bmp-ts');

/** A few reused workers; jobs wait in order when all are busy. Idle workers do not keep the process alive. */
class BmpWorkers {
  private readonly idle: Worker[] = [];
  private readonly queue: Job[] = [];
  private started = 0;
  private nextId = 1;

  run(bytes: Uint8Array): Promise<WorkerAnswer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ bytes, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.started < MAX_WORKERS ? this.spawn() : undefined);
      if (!worker) return;
      this.assign(worker, this.queue.shift()!);
    }
  }

  private spawn(): Worker {
    this.started++;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bmpTs } });
    worker.unref();
    // Errors are answered through the job that was running (below); an idle worker's must not go unheard.
    worker.on('error', () => {});
    worker.on('exit', () => {
      this.started--;
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
    });
    return worker;
  }

  private assign(worker: Worker, job: Job): void {
    const id = this.nextId++;
    worker.ref();
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.unref();
    };
    const onMessage = (answer: WorkerAnswer) => {
      if (answer.id !== id) return;
      done();
      this.idle.push(worker);
      job.resolve(answer);
      this.pump();
    };
    // A worker that dies (out of memory, a bug) fails its job only; the next job gets a fresh worker.
    const onError = () => {
      done();
      job.reject(new Error('BMP pixel data could not be decoded'));
      this.pump();
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
    // A copy goes to the worker: the request's bytes may share their buffer with other data.
    worker.postMessage({ id, bytes: job.bytes });
  }
}

let workers: BmpWorkers | undefined;

/**
 * Decode a BMP file to interleaved 8-bit RGB or RGBA, as `decodeBmp` does, without holding the event loop.
 * Call `readBmpHeader` and `assertBmpCarriesPixels` first to bound the size.
 */
export async function decodeBmpOffThread(bytes: Uint8Array): Promise<DecodedBmp> {
  workers ??= new BmpWorkers();
  const answer = await workers.run(bytes);
  if (answer.failed) throw new Error('BMP pixel data is malformed or truncated');
  const { width, height, bitPP } = answer;
  const n = width * height;
  if (answer.data.length < n * 4) throw new Error('truncated BMP pixel data');
  const rgba = Buffer.from(answer.data.buffer, answer.data.byteOffset, n * 4);
  const raw = () => sharp(rgba, { raw: { width, height, channels: 4 }, limitInputPixels: false });
  // Only 32-bit files can carry alpha; one whose fourth byte is all 0 or all 255 is plain RGB.
  if (bitPP === 32) {
    const alpha = (await raw().stats()).channels[3]!;
    if (alpha.min !== 255 && alpha.max !== 0) return { width, height, channels: 4, data: rgba };
  }
  const rgb = await raw().removeAlpha().raw().toBuffer();
  return { width, height, channels: 3, data: new Uint8Array(rgb.buffer, rgb.byteOffset, rgb.byteLength) };
}
