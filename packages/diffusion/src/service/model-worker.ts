import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { isTiffinError } from '@tiffin/core';
import { selectBackend } from '../backend.js';
import { LoraCache } from '../lora/cache.js';
import { mergeLora } from '../lora/merge.js';
import { readLoraDefaults } from '../pipeline/model-defaults.js';
import { StableDiffusionPipeline } from '../pipeline/pipeline.js';
import { INPAINT_UNET_CHANNELS } from '../pipeline/stable-diffusion/inpaint.js';
import type { GenerationProgress, GenerationResult, RequestLora } from '../pipeline/types.js';
import { GENERATION_KINDS } from './kinds/index.js';
import { assertModelFits } from './model-fit.js';
import type {
  HostMessage,
  JobMessage,
  WarmUp,
  WorkerError,
  WorkerInit,
  WorkerMessage,
} from './worker-protocol.js';

/**
 * The model worker: the only owner of the pipeline. The start-up LoRA (`--lora-weights`) is merged
 * into the weights once and stays for every job. A request's own LoRA runs unfused (a run-time
 * low-rank branch next to the start-up-merged weights): the shared weights are never written, so
 * the state after any request is exactly the state before it, whatever happens mid-request. Jobs
 * still run one at a time: they share this thread, so interleaving them would only slow each down.
 * A `cancel` message is read between denoising steps (the pipeline yields to the event loop after
 * each), so a cancelled job stops at its next step.
 */
if (!parentPort) throw new Error('model-worker must run in a worker thread');
const port: MessagePort = parentPort;
const init = (workerData as { init: WorkerInit }).init;
const send = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

function describe(err: unknown): WorkerError {
  if (isTiffinError(err))
    return { message: err.message, type: err.name, status: err.httpStatus, code: err.code };
  return { message: err instanceof Error ? err.message : String(err), type: 'Error' };
}

async function start(): Promise<void> {
  let pipe: StableDiffusionPipeline;
  let warmUp: WarmUp;
  const startLog: string[] = [];
  try {
    const backend = await selectBackend(init.backend, () => {});
    // Before reading gigabytes: a model the backend cannot hold fails now, with what to do instead.
    assertModelFits(init.modelDir, backend.name);
    pipe = await StableDiffusionPipeline.fromPretrained(init.modelDir, {
      backend: init.backend,
      onnx: init.onnx,
      // The start-up LoRA's own defaults (an LCM-LoRA's scheduler keys) join the folder's.
      defaults: init.baseLoraPath ? readLoraDefaults(init.baseLoraPath) : undefined,
      vaeTiny: init.vaeTiny,
      controlnets: init.controlnets,
      skipUnfitControlNets: init.skipUnfitControlNets,
      log: (line) => startLog.push(line),
    });
    if (init.baseLoraPath) mergeLora(pipe.loraTarget, new LoraCache(1).get(init.baseLoraPath));
    warmUp = await runWarmUp(pipe);
  } catch (err) {
    send({ type: 'init-failed', error: describe(err) });
    return;
  }
  const loras = new LoraCache(init.loraCacheSize, undefined, init.loraCacheBytes);
  const cancels = new Map<number, AbortController>();
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (message: HostMessage) => {
    if (message.type === 'shutdown') {
      queue.finally(() => {
        pipe.dispose();
        port.close();
      });
      return;
    }
    if (message.type === 'cancel') {
      cancels.get(message.id)?.abort();
      return;
    }
    const controller = new AbortController();
    cancels.set(message.id, controller);
    queue = queue
      .then(() => runJob(pipe, loras, message, controller.signal))
      .finally(() => cancels.delete(message.id));
  });
  send({
    type: 'ready',
    defaultSize: pipe.defaultSize,
    backend: pipe.backend?.name ?? 'unknown',
    defaultScheduler: pipe.defaultScheduler,
    warmUp,
    startLog,
  });
}

/**
 * Readiness means the model has run: two steps with guidance at the smallest size the service accepts, so
 * a backend that loads the weights but cannot run them (a full wasm heap) fails here, not on the first
 * request. The second step's time seeds the queue's Retry-After estimate.
 */
async function runWarmUp(pipe: StableDiffusionPipeline): Promise<WarmUp> {
  const size = Math.max(8, pipe.vae.scaleFactor);
  const steps = 2;
  const started = performance.now();
  let last = started;
  let stepSeconds = 0;
  const request = {
    prompt: '',
    num_inference_steps: steps,
    guidance_scale: 7.5,
    seed: 0,
    onProgress: () => {
      const now = performance.now();
      stepSeconds = (now - last) / 1000;
      last = now;
    },
  };
  if (pipe.unet.config.in_channels === INPAINT_UNET_CHANNELS) {
    // An inpainting UNet runs inpainting only: warm up on a grey picture with everything repainted.
    const grey = { width: size, height: size, data: new Uint8Array(size * size * 3).fill(128) };
    const white = { width: size, height: size, data: new Uint8Array(size * size).fill(255) };
    await pipe.inpaint({ ...request, image: grey, mask_image: white });
  } else await pipe.text2img({ ...request, height: size, width: size });
  const latent = size / pipe.vae.scaleFactor;
  return {
    size,
    steps,
    unitsPerStep: latent * latent * 2,
    stepSeconds,
    seconds: (performance.now() - started) / 1000,
  };
}

/** A request's LoRA file; its errors name the file as the request did, never by its server path. */
function readRequestLora(cache: LoraCache, lora: { path: string; name: string }) {
  try {
    return cache.get(lora.path);
  } catch (err) {
    if (err instanceof Error) err.message = err.message.split(lora.path).join(lora.name);
    throw err;
  }
}

async function runJob(
  pipe: StableDiffusionPipeline,
  loras: LoraCache,
  job: JobMessage,
  signal: AbortSignal,
): Promise<void> {
  const started = performance.now();
  try {
    const lora: RequestLora[] = job.loras.map((l) => ({
      file: readRequestLora(loras, l),
      scale: l.weight,
      mode: 'unfused',
      defaults: readLoraDefaults(l.path),
    }));
    const { input } = job;
    // Awaited by the loop: a tiny-decoded preview is made between steps, not beside the next one.
    const onProgress = async ({ step, totalSteps, timestep, latents }: GenerationProgress) => {
      const preview = job.preview && latents ? await pipe.preview(latents, step, totalSteps) : undefined;
      send({ type: 'progress', id: job.id, step, totalSteps, timestep, ...(preview ? { preview } : {}) });
    };
    // ControlNet maps come at the output size (the service resized them and ran their module).
    const controlnet = input.controlnet ? { controlnet: input.controlnet } : {};
    const common = { ...input.params, onProgress, signal, lora, ...controlnet };
    const result: GenerationResult = await GENERATION_KINDS[input.kind].run(pipe, input, common);
    const images = result.images.map((image) => ({
      width: image.width,
      height: image.height,
      data: new Uint8Array(image.data),
    }));
    send(
      {
        type: 'done',
        id: job.id,
        images,
        seeds: result.seeds,
        seconds: (performance.now() - started) / 1000,
      },
      images.map((image) => image.data.buffer as ArrayBuffer),
    );
  } catch (err) {
    send({ type: 'failed', id: job.id, error: describe(err) });
  }
}

await start();
