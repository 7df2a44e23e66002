import * as tf from '@tensorflow/tfjs';
import type { TextTimeInputs } from '../models/unet-stages.js';
import type { LowRankBranchesByName } from '../ops/tfjs/low-rank.js';
import { throwIfCancelled } from './cancel.js';
import type { DenoiseStart, GenerationRun } from './generation-run.js';

/** The noise predictor the loop calls (the UNet; SDXL's also takes the pooled text embeds and time ids). */
export interface NoisePredictor {
  predict(
    sample: tf.Tensor4D,
    timestep: number,
    context: tf.Tensor3D,
    lora?: LowRankBranchesByName,
    textTime?: TextTimeInputs,
  ): tf.Tensor4D | Promise<tf.Tensor4D>;
}

/** What the UNet is conditioned on besides latents and timestep, batched like the latents it meets. */
export interface Conditioning {
  /** [B, 77, cross_attention_dim] ([negative, positive] with guidance). */
  context: tf.Tensor3D;
  /** SDXL's added conditioning (pooled text embeds and micro-conditioning time ids), same batch order. */
  textTime?: TextTimeInputs;
}

/**
 * The denoising loop shared by every pipeline (docs/spec/diffusion.md §8.1): per timestep, scale the input, predict the
 * noise (a [negative, positive] batch with guidance), guide, step the scheduler. Reports each step,
 * yields to the event loop between steps and stops at the next step once the run's signal aborts.
 * Returns the final latents (owned by the run).
 */
export async function denoise(
  predictor: NoisePredictor,
  run: GenerationRun,
  conditioning: Conditioning,
  start: DenoiseStart,
): Promise<tf.Tensor4D> {
  const { context, textTime } = conditioning;
  const { scheduler, params, request } = run;
  const guided = run.guided;
  const unetLora = run.lora?.component('unet');
  const { timesteps, totalSteps } = start;
  // Progress counts the steps asked for: PNDM's list has one more entry (its warm-up repeats a
  // timestep), which is not reported as a step of its own.
  const extra = Math.max(0, timesteps.length - totalSteps);
  const source = run.noise.schedulerSource();
  let latents = run.own(start.latents);
  throwIfCancelled(request.signal, 0, totalSteps);
  for (let i = 0; i < timesteps.length; i++) {
    const t = timesteps[i];
    const input = guided ? tf.concat([latents, latents], 0) : tf.clone(latents);
    const scaled = scheduler.scaleModelInput(input, t) as tf.Tensor4D;
    input.dispose();
    const raw = await predictor.predict(scaled, t, context, unetLora, textTime);
    scaled.dispose();
    const modelOutput = guided ? guide(raw, params.guidance_scale, params.guidance_rescale) : raw;
    if (modelOutput !== raw) raw.dispose();
    const { prevSample } = scheduler.step(modelOutput, t, latents, { noise: source, eta: params.eta });
    modelOutput.dispose();
    latents = run.replace(latents, prevSample as tf.Tensor4D);
    const step = i + 1 - extra;
    if (step > 0) request.onProgress?.({ step, totalSteps, timestep: t, latents });
    // Let the event loop breathe between steps (health checks, progress streaming, a cancel).
    await new Promise((r) => setImmediate(r));
    throwIfCancelled(request.signal, Math.max(0, step), totalSteps);
  }
  return latents;
}

/** Classifier-free guidance on a [negative, positive] prediction, with optional rescale φ (docs/spec/diffusion.md §8.1). */
function guide(prediction: tf.Tensor4D, scale: number, rescale: number): tf.Tensor4D {
  return tf.tidy(() => {
    const [mu, mc] = tf.split(prediction, 2, 0);
    const guided = tf.add(mu, tf.mul(tf.sub(mc, mu), scale));
    return rescale > 0 ? rescaleGuidance(guided, mc, rescale) : guided;
  }) as tf.Tensor4D;
}

/** guidance_rescale (docs/spec/diffusion.md §8.1): std over all non-batch axes. */
function rescaleGuidance(guided: tf.Tensor, cond: tf.Tensor, phi: number): tf.Tensor {
  const axes = [1, 2, 3];
  const stdOf = (t: tf.Tensor) => tf.sqrt(tf.moments(t, axes, true).variance);
  const rescaled = tf.mul(guided, tf.div(stdOf(cond), stdOf(guided)));
  return tf.add(tf.mul(rescaled, phi), tf.mul(guided, 1 - phi));
}
