import { f32, torchLinspaceF32 } from './numeric.js';
import type { SharedSchedulerConfig } from './types.js';

/** Training noise schedule shared by all schedulers (docs/spec/diffusion.md §7). Arrays hold float32 values. */
export interface NoiseSchedule {
  betas: Float32Array;
  alphasCumprod: Float32Array;
}

/** `ᾱ(s) = cos²((s + 0.008) / 1.008 · π/2)` of the cosine schedule (squaredcos_cap_v2). */
function cosineAlphaBar(s: number): number {
  return Math.cos(((s + 0.008) / 1.008) * (Math.PI / 2)) ** 2;
}

export function computeBetas(config: SharedSchedulerConfig): Float32Array {
  const T = config.num_train_timesteps;
  if (config.trained_betas) return Float32Array.from(config.trained_betas);
  switch (config.beta_schedule) {
    case 'linear':
      return torchLinspaceF32(config.beta_start, config.beta_end, T);
    case 'scaled_linear': {
      // torch.linspace(√start, √end, T, float32) ** 2, squared in float32.
      const roots = torchLinspaceF32(Math.sqrt(config.beta_start), Math.sqrt(config.beta_end), T);
      return roots.map((r) => f32(r * r));
    }
    case 'squaredcos_cap_v2': {
      // diffusers computes this list in float64 Python, then stores float32.
      const betas = new Float32Array(T);
      for (let i = 0; i < T; i++) {
        betas[i] = Math.min(1 - cosineAlphaBar((i + 1) / T) / cosineAlphaBar(i / T), 0.999);
      }
      return betas;
    }
  }
}

export function computeNoiseSchedule(config: SharedSchedulerConfig): NoiseSchedule {
  const betas = computeBetas(config);
  const alphasCumprod = new Float32Array(betas.length);
  // torch.cumprod on CPU accumulates float32 inputs in double and stores float32.
  let acc = 1;
  for (let i = 0; i < betas.length; i++) {
    acc *= f32(1 - betas[i]);
    alphasCumprod[i] = acc;
  }
  return { betas, alphasCumprod };
}

/** k-diffusion noise levels `σ_i = sqrt((1 - ᾱ_i) / ᾱ_i)`, in float32 like the reference. */
export function sigmasFromAlphasCumprod(alphasCumprod: Float32Array): Float32Array {
  return alphasCumprod.map((a) => f32(Math.sqrt(f32(f32(1 - a) / a))));
}
