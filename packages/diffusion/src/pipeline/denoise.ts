import type { HostControlResiduals, HostTextTime, UNetEngine } from '../engines/engine-models.js';
import { add, mul, stdPerBatch, sub } from '../latents/float32-math.js';
import { concat, type HostTensor, splitBatch } from '../latents/host-tensor.js';
import { throwIfCancelled } from './cancel.js';
import type { DenoiseStart, GenerationRun } from './generation-run.js';

/** The noise predictor the loop calls (the UNet; SDXL's also takes the pooled text embeds and time ids). */
export type NoisePredictor = Pick<UNetEngine, 'predictOnHost'>;

/** What the UNet is conditioned on besides latents and timestep, batched like the latents it meets. */
export interface Conditioning {
  /** [B, 77, cross_attention_dim] ([negative, positive] with guidance). */
  context: HostTensor;
  /** SDXL's added conditioning (pooled text embeds and micro-conditioning time ids), same batch order. */
  textTime?: HostTextTime;
  /**
   * ControlNets' residuals for call `i` of `n` (one per timestep entry) on the scaled latents (the guidance batch),
   * or undefined on a step without control.
   */
  control?: (
    i: number,
    n: number,
    scaled: HostTensor,
    t: number,
  ) => Promise<HostControlResiduals | undefined>;
}

/**
 * The denoising loop shared by every pipeline (docs/spec/diffusion.md §8.1): per timestep, scale the input, predict the
 * noise (a [negative, positive] batch with guidance), guide, step the scheduler. Reports each step,
 * yields to the event loop between steps and stops at the next step once the run's signal aborts.
 * All of it on host arrays: only the UNet call crosses into an engine.
 */
export async function denoise(
  predictor: NoisePredictor,
  run: GenerationRun,
  conditioning: Conditioning,
  start: DenoiseStart,
): Promise<HostTensor> {
  const { context, textTime } = conditioning;
  const { scheduler, params, request } = run;
  const guided = run.guided;
  const unetLora = run.loraFor('unet');
  const { timesteps, totalSteps } = start;
  // Progress counts the steps asked for, as diffusers' progress bar does: PNDM's list has one more entry (its
  // warm-up repeats a timestep), not a step of its own; Heun, KDPM2 and DPM++ SDE (order 2) call the model twice a
  // step, and a step is done after every second call (docs/spec/diffusion.md §7.9).
  const order = scheduler.order;
  const warmup = timesteps.length - totalSteps * order;
  let step = 0;
  const source = run.noise.schedulerSource();
  const brownian = run.noise.brownianSource();
  let latents = start.latents;
  throwIfCancelled(request.signal, 0, totalSteps);
  for (let i = 0; i < timesteps.length; i++) {
    const t = timesteps[i];
    const input = guided ? concat([latents, latents]) : latents;
    const scaledLatents = scheduler.scaleModelInput(input, t);
    const scaled = start.unetExtra ? concat([scaledLatents, start.unetExtra], -1) : scaledLatents;
    const control = await conditioning.control?.(i, timesteps.length, scaledLatents, t);
    const raw = await predictor.predictOnHost(scaled, t, context, unetLora, textTime, control);
    const modelOutput = guided ? guide(raw, params.guidance_scale, params.guidance_rescale) : raw;
    latents = scheduler.step(modelOutput, t, latents, {
      noise: source,
      eta: params.eta,
      brownian,
    }).prevSample;
    if (start.afterStep) latents = start.afterStep(latents, i);
    const done = i === timesteps.length - 1 || (i + 1 > warmup && (i + 1) % order === 0);
    if (done) {
      step += 1;
      await request.onProgress?.({ step, totalSteps, timestep: t, latents });
    }
    // Let the event loop breathe between steps (health checks, progress streaming, a cancel).
    await new Promise((r) => setImmediate(r));
    throwIfCancelled(request.signal, step, totalSteps);
  }
  return latents;
}

/** Classifier-free guidance on a [negative, positive] prediction, with optional rescale φ (docs/spec/diffusion.md §8.1). */
export function guide(prediction: HostTensor, scale: number, rescale: number): HostTensor {
  const [mu, mc] = splitBatch(prediction, 2);
  const guided = add(mu, mul(sub(mc, mu), scale));
  return rescale > 0 ? rescaleGuidance(guided, mc, rescale) : guided;
}

/** guidance_rescale (docs/spec/diffusion.md §8.1): std over all non-batch axes, per batch entry. */
function rescaleGuidance(guided: HostTensor, cond: HostTensor, phi: number): HostTensor {
  const stdCond = stdPerBatch(cond);
  const stdGuided = stdPerBatch(guided);
  const per = guided.data.length / guided.shape[0];
  const f = Math.fround;
  const p = f(phi);
  const q = f(1 - phi);
  const data = guided.data.map((g, i) => {
    const k = Math.floor(i / per);
    const rescaled = f(g * f(stdCond[k] / stdGuided[k]));
    return f(rescaled * p) + f(g * q);
  });
  return { data, shape: guided.shape };
}
