import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { isTiffinError } from '@tiffin/core';
import { LoraCache } from '../lora/cache.js';
import { mergeLora } from '../lora/merge.js';
import { StableDiffusionPipeline } from '../pipeline/pipeline.js';
import type { GenerationResult, RequestLora } from '../pipeline/types.js';
import type { HostMessage, JobMessage, WorkerInit, WorkerMessage } from './worker-protocol.js';

/**
 * The model worker: the only owner of the pipeline. The start-up LoRA (`--lora-weights`) is merged
 * into the weights once and stays for every job. A request's own LoRA runs unfused (a run-time
 * low-rank branch next to the start-up-merged weights): the shared weights are never written, so
 * the state after any request is exactly the state before it, whatever happens mid-request. Jobs
 * still run one at a time: they share this thread, so interleaving them would only slow each down.
 */
if (!parentPort) throw new Error('model-worker must run in a worker thread');
const port: MessagePort = parentPort;
const init = (workerData as { init: WorkerInit }).init;
const send = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

async function start(): Promise<void> {
  let pipe: StableDiffusionPipeline;
  try {
    pipe = await StableDiffusionPipeline.fromPretrained(init.modelDir, {
      backend: init.backend,
      log: () => {},
    });
    if (init.baseLoraPath) mergeLora(pipe.loraTarget, new LoraCache(1).get(init.baseLoraPath));
  } catch (err) {
    send({ type: 'init-failed', message: err instanceof Error ? err.message : String(err) });
    return;
  }
  const loras = new LoraCache(init.loraCacheSize);
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: HostMessage) => {
    if (message.type === 'shutdown') {
      queue.finally(() => {
        pipe.dispose();
        port.close();
      });
      return;
    }
    queue = queue.then(() => runJob(pipe, loras, message));
  });
  send({
    type: 'ready',
    defaultSize: pipe.defaultSize,
    backend: pipe.backend?.name ?? 'unknown',
    defaultScheduler: pipe.defaultScheduler,
  });
}

async function runJob(pipe: StableDiffusionPipeline, loras: LoraCache, job: JobMessage): Promise<void> {
  const started = performance.now();
  try {
    const lora: RequestLora | undefined = job.loraPath
      ? { file: loras.get(job.loraPath), mode: 'unfused' }
      : undefined;
    const { input } = job;
    const onProgress = (p: { step: number; totalSteps: number; timestep: number }) =>
      send({ type: 'progress', id: job.id, ...p });
    const common = { ...input.params, onProgress, ...(lora ? { lora } : {}) };
    const result: GenerationResult =
      input.kind === 'text2img'
        ? await pipe.text2img({ ...common, height: input.height, width: input.width })
        : await pipe.img2img({ ...common, strength: input.strength, image: input.image });
    const image = result.images[0];
    const data = new Uint8Array(image.data);
    send(
      {
        type: 'done',
        id: job.id,
        image: { width: image.width, height: image.height, data },
        seed: result.seed,
        seconds: (performance.now() - started) / 1000,
      },
      [data.buffer as ArrayBuffer],
    );
  } catch (err) {
    const status = isTiffinError(err) ? err.httpStatus : 500;
    send({ type: 'failed', id: job.id, message: err instanceof Error ? err.message : String(err), status });
  }
}

await start();
