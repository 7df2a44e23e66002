import { add, div, mul, sub } from '../latents/float32-math.js';
import type { HostStep } from './base.js';
import { drawNoise } from './base.js';
import { SHARED_DEFAULTS } from './config.js';
import { defineScheduler } from './definition.js';
import { EulerFamilyScheduler } from './euler.js';
import { f32 } from './numeric.js';
import type { SchedulerConfig, SharedSchedulerConfig } from './types.js';

const DEFAULTS: SharedSchedulerConfig = { ...SHARED_DEFAULTS, timestep_spacing: 'linspace' };

/** `euler_a` (docs/spec/diffusion.md §7.6): no keys of its own; listed in `registry.ts`. */
export const eulerAncestral = defineScheduler({
  name: 'euler_a',
  className: 'EulerAncestralDiscreteScheduler',
  defaults: DEFAULTS,
  create: (config) => new EulerAncestralDiscreteScheduler(config),
});

/** EulerAncestralDiscreteScheduler (docs/spec/diffusion.md §7.6): one fresh noise draw per step. */
export class EulerAncestralDiscreteScheduler extends EulerFamilyScheduler<SharedSchedulerConfig> {
  constructor(config?: SchedulerConfig) {
    super(eulerAncestral, config);
  }

  protected stepHost: HostStep = (modelOutput, timestep, sample, options = {}) => {
    this.requireTimesteps();
    const k = this.currentStepIndex(timestep);
    const sigmaFrom = this.sigmas[k];
    const sigmaTo = this.sigmas[k + 1];
    const from2 = f32(sigmaFrom * sigmaFrom);
    const to2 = f32(sigmaTo * sigmaTo);
    const sigmaUp = f32(Math.sqrt(f32(f32(to2 * f32(from2 - to2)) / from2)));
    const sigmaDown = f32(Math.sqrt(f32(to2 - f32(sigmaUp * sigmaUp))));
    const dt = f32(sigmaDown - sigmaFrom);
    const noise = drawNoise(options.noise, sample.shape, this.className);
    const x0 = this.predictOriginal(modelOutput, sample, sigmaFrom);
    const derivative = div(sub(sample, x0), sigmaFrom);
    const next = add(sample, mul(derivative, dt));
    this.stepIndex = k + 1;
    return add(next, mul(noise, sigmaUp));
  };
}
