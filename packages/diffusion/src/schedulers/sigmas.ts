import { f32, linspace } from './numeric.js';
import type { TimestepSpacing } from './types.js';

/** Karras et al. noise levels between σmax and σmin, ρ = 7 (float64, like diffusers). */
export function karrasSigmas(sigmaMax: number, sigmaMin: number, n: number): number[] {
  const rho = 7;
  const minInv = sigmaMin ** (1 / rho);
  const maxInv = sigmaMax ** (1 / rho);
  return linspace(0, 1, n).map((r) => (maxInv + r * (minInv - maxInv)) ** rho);
}

/**
 * diffusers `_sigma_to_t`: fractional timestep of a sigma by linear interpolation in log-sigma over
 * the float32 table `logSigmas` (ascending). `(low - high)` is a float32 difference in the reference.
 */
export function sigmaToT(sigma: number, logSigmas: Float32Array): number {
  const logSigma = Math.log(Math.max(sigma, 1e-10));
  const n = logSigmas.length;
  let lowIdx = 0;
  for (let i = 0; i < n; i++) if (logSigma - logSigmas[i] >= 0) lowIdx = i;
  lowIdx = Math.min(lowIdx, n - 2);
  const highIdx = lowIdx + 1;
  const low = logSigmas[lowIdx];
  const high = logSigmas[highIdx];
  let w = (low - logSigma) / f32(low - high);
  w = Math.min(Math.max(w, 0), 1);
  return (1 - w) * lowIdx + w * highIdx;
}

/** `ln σ_i` of a float32 sigma table, stored float32 (np.log on a float32 array). */
export function logSigmaTable(sigmas: Float32Array): Float32Array {
  return sigmas.map((s) => Math.log(s));
}

/**
 * `init_noise_sigma` of the sigma (k-diffusion) schedulers: the largest sigma for `linspace` / `trailing` spacing,
 * else `sqrt(max² + 1)` (docs/spec/diffusion.md §7.5), in float32.
 */
export function sigmaInitNoise(sigmas: readonly number[], spacing: TimestepSpacing): number {
  const maxSigma = Math.max(...sigmas.filter((s) => !Number.isNaN(s)));
  return spacing === 'linspace' || spacing === 'trailing'
    ? maxSigma
    : f32(Math.sqrt(f32(f32(maxSigma * maxSigma) + 1)));
}
