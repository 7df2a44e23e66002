import { InvalidArgument } from '@tiffin/core';
import { copy } from '../latents/float32-math.js';
import { type HostTensor, hostTensor, sizeOf } from '../latents/host-tensor.js';
import { type AnyTensor, asHost, isTfTensor, like } from '../latents/tfjs-interop.js';
import { readSchedulerConfig } from './config.js';
import type { SchedulerDefinition } from './definition.js';
import { computeNoiseSchedule } from './noise-schedule.js';
import { checkStepCount } from './spacing.js';
import type {
  NoiseSource,
  Scheduler,
  SchedulerConfig,
  SharedSchedulerConfig,
  StepOptions,
  StepResult,
} from './types.js';

/** A scheduler's step on host tensors (model output, timestep, sample, options) → the next sample. */
export type HostStep = (
  modelOutput: HostTensor,
  timestep: number,
  sample: HostTensor,
  options?: StepOptions,
) => HostTensor;

/** State and helpers common to the schedulers (noise schedule, step index, begin index). */
export abstract class BaseScheduler<C extends SharedSchedulerConfig = SharedSchedulerConfig>
  implements Scheduler
{
  readonly name: string;
  readonly className: string;
  readonly config: Readonly<C>;
  /** Model evaluations per step in diffusers' sense: 2 for the two-evaluation classes (Heun, KDPM2, DPM++ SDE). */
  readonly order: number = 1;
  /** ᾱ_t, float32 values. */
  protected readonly alphasCumprod: Float32Array;
  protected timestepList: number[] = [];
  protected beginIndex: number | null = null;
  protected stepIndex: number | null = null;
  numInferenceSteps: number | null = null;
  initNoiseSigma = 1;

  constructor(definition: SchedulerDefinition<string, C>, config: SchedulerConfig | undefined) {
    this.name = definition.name;
    this.className = definition.className;
    this.config = readSchedulerConfig(definition, config);
    this.alphasCumprod = computeNoiseSchedule(this.config).alphasCumprod;
  }

  get timesteps(): readonly number[] {
    return this.timestepList;
  }

  setTimesteps(numInferenceSteps: number): void {
    checkStepCount(numInferenceSteps, this.config.num_train_timesteps);
    this.dispose();
    this.numInferenceSteps = numInferenceSteps;
    this.beginIndex = null;
    this.stepIndex = null;
    this.computeTimesteps(numInferenceSteps);
  }

  /** Fills `timestepList` (and sigmas, initNoiseSigma) and resets per-generation state. */
  protected abstract computeTimesteps(numInferenceSteps: number): void;

  setBeginIndex(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.timestepList.length) {
      throw new InvalidArgument(`begin index ${index} is outside the ${this.timestepList.length} timesteps`);
    }
    this.beginIndex = index;
  }

  scaleModelInput<T extends AnyTensor>(sample: T, timestep: number): T {
    return like(sample, this.scaleInput(asHost(sample), timestep));
  }

  step<T extends AnyTensor>(
    modelOutput: T,
    timestep: number,
    sample: T,
    options?: StepOptions,
  ): StepResult<T> {
    return {
      prevSample: like(sample, this.stepHost(asHost(modelOutput), timestep, asHost(sample), options)),
    };
  }

  addNoise<T extends AnyTensor>(original: T, noise: T, timestep: number): T {
    return like(original, this.noised(asHost(original), asHost(noise), timestep));
  }

  /** The scaled UNet input (identity for DDIM/PNDM/DPM++). */
  protected scaleInput(sample: HostTensor, _timestep: number): HostTensor {
    return copy(sample);
  }

  /** One denoising step on host tensors: the sample for the next timestep. */
  protected abstract stepHost: HostStep;

  /** `original` forward-noised to `timestep`. */
  protected abstract noised(original: HostTensor, noise: HostTensor, timestep: number): HostTensor;

  dispose(): void {}

  protected requireTimesteps(): void {
    if (this.numInferenceSteps === null) {
      throw new Error(`${this.className}: call setTimesteps() before stepping`);
    }
  }

  /** diffusers `index_for_timestep`: the second occurrence when a value repeats. */
  protected indexForTimestep(timestep: number): number {
    const hits: number[] = [];
    this.timestepList.forEach((t, i) => {
      if (t === timestep) hits.push(i);
    });
    if (hits.length === 0) {
      throw new InvalidArgument(
        `${this.className}: timestep ${timestep} is not one of the scheduled timesteps`,
      );
    }
    return hits.length > 1 ? hits[1] : hits[0];
  }

  /**
   * The sigma index `addNoise` noises to, diffusers' `add_noise` rule for the sigma schedulers: the timestep's own
   * index when no begin index is set; else, once stepping has begun, the current step index (inpainting's blend
   * noises the kept latents to the timestep about to run); before the first step, the begin index (img2img's start).
   */
  protected noiseIndex(timestep: number): number {
    if (this.beginIndex === null) return this.indexForTimestep(timestep);
    return this.stepIndex ?? this.beginIndex;
  }

  /** Step index for the k-diffusion style schedulers (Euler, Euler A, DPM++). */
  protected currentStepIndex(timestep: number): number {
    if (this.stepIndex === null) this.stepIndex = this.beginIndex ?? this.indexForTimestep(timestep);
    return this.stepIndex;
  }
}

/** Takes one standard-normal draw of `shape` from `source`. */
export function drawNoise(
  source: NoiseSource | undefined,
  shape: readonly number[],
  who: string,
): HostTensor {
  if (!source) throw new Error(`${who}: this step draws noise; pass options.noise`);
  const drawn = source([...shape]);
  if (drawn instanceof Float32Array) {
    if (drawn.length !== sizeOf(shape)) {
      throw new Error(`${who}: noise source returned ${drawn.length} values for shape [${shape.join(', ')}]`);
    }
    return hostTensor(drawn, shape);
  }
  const host = asHost(drawn);
  // A TF.js tensor handed over is the scheduler's to release.
  if (isTfTensor(drawn)) drawn.dispose();
  if (host.shape.join(',') !== shape.join(',')) {
    throw new Error(
      `${who}: noise source returned shape [${host.shape.join(', ')}], expected [${shape.join(', ')}]`,
    );
  }
  return host;
}
