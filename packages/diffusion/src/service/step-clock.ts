import type { JobInput } from './worker-protocol.js';

/** What a generation costs: its denoising steps and the UNet work of one step. */
export interface JobCost {
  /** Denoising steps the job will run. */
  steps: number;
  /** Latent pixels × UNet batch (×2 with classifier-free guidance, × images per prompt) of one step. */
  unitsPerStep: number;
}

/** Weight of the newest measurement in the moving averages. */
const SMOOTHING = 0.3;
/** Seconds per step assumed before anything was measured (the service measures its warm-up first). */
const UNMEASURED_STEP_SECONDS = 1;
/** Job sizes remembered. */
const MAX_SIZES = 16;

interface Measured {
  /** Seconds per denoising step (moving average). */
  step: number;
  /** Seconds of a job outside its steps: prompt encoding, VAE decode (moving average). */
  overhead: number;
}

/**
 * Measured generation speed per job size (UNet work of one step): step-to-step times and the time a job
 * spends outside its steps. A size not measured yet is scaled linearly from the nearest measured one.
 * Retry-After and queue estimates come from here, so they follow the model, the backend and the
 * machine instead of a constant.
 */
export class StepClock {
  private readonly sizes = new Map<number, Measured>();

  /** One denoising step of `units` work took `seconds`. */
  recordStep(units: number, seconds: number): void {
    if (!(units > 0) || !(seconds >= 0)) return;
    const known = this.sizes.get(units);
    this.remember(units, {
      step: known ? known.step * (1 - SMOOTHING) + seconds * SMOOTHING : seconds,
      overhead: known?.overhead ?? 0,
    });
  }

  /** A whole job took `seconds`: what its steps do not explain is overhead. */
  recordJob(cost: JobCost, seconds: number): void {
    const known = this.sizes.get(cost.unitsPerStep);
    if (!known) return;
    const outside = Math.max(0, seconds - cost.steps * known.step);
    const overhead = known.overhead === 0 ? outside : known.overhead * (1 - SMOOTHING) + outside * SMOOTHING;
    this.remember(cost.unitsPerStep, { step: known.step, overhead });
  }

  /** Seconds left for a job of `cost` that finished `stepsDone` steps (0: not started). */
  remainingSeconds(cost: JobCost, stepsDone = 0): number {
    const { step, overhead } = this.estimate(cost.unitsPerStep);
    // The overhead is counted whole even mid-job: the VAE decode, its larger part, is still ahead.
    return Math.max(0, cost.steps - stepsDone) * step + overhead;
  }

  /** Seconds per step and per-job overhead for steps of `units` work. */
  estimate(units: number): Measured {
    const exact = this.sizes.get(units);
    if (exact) return exact;
    let nearest: [number, Measured] | undefined;
    for (const entry of this.sizes) {
      if (!nearest || Math.abs(Math.log(entry[0] / units)) < Math.abs(Math.log(nearest[0] / units)))
        nearest = entry;
    }
    if (!nearest) return { step: UNMEASURED_STEP_SECONDS, overhead: 0 };
    const scale = units / nearest[0];
    return { step: nearest[1].step * scale, overhead: nearest[1].overhead * scale };
  }

  private remember(units: number, measured: Measured): void {
    this.sizes.delete(units);
    this.sizes.set(units, measured);
    if (this.sizes.size > MAX_SIZES) this.sizes.delete(this.sizes.keys().next().value as number);
  }
}

/** The SD VAE's scale factor: latent pixels are image pixels / 8 a side. */
const VAE_GRID = 8;

/** The job's UNet work for queue estimates: latent pixels × batch (×2 with guidance) per step. */
export function jobCost(input: JobInput): JobCost {
  const { params, height, width, strength } = input;
  const latentPixels = (height / VAE_GRID) * (width / VAE_GRID);
  const steps =
    strength === undefined
      ? params.num_inference_steps
      : Math.min(Math.floor(params.num_inference_steps * strength), params.num_inference_steps);
  const batch = params.num_images_per_prompt * (params.guidance_scale > 1 ? 2 : 1);
  const { hires } = input;
  if (!hires) return { steps, unitsPerStep: latentPixels * batch };
  // A hires fix's second pass, counted in first-pass steps by its latent size.
  const hiresSteps = hires.steps > 0 ? hires.steps : params.num_inference_steps;
  const second = Math.min(Math.floor(hiresSteps * hires.strength), hiresSteps);
  const ratio = ((hires.height / VAE_GRID) * (hires.width / VAE_GRID)) / latentPixels;
  return { steps: steps + Math.ceil(second * ratio), unitsPerStep: latentPixels * batch };
}
