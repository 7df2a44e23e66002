import type { HostControlResiduals, HostTextTime } from '../engines/engine-models.js';
import { add, mul } from '../latents/float32-math.js';
import { concat, type HostTensor, splitBatch } from '../latents/host-tensor.js';
import type { PreparedControlNet } from './controlnet-units.js';

/**
 * diffusers' `controlnet_keep` (docs/spec/diffusion.md §8.4) for step `i` of `n` timesteps: the net is on unless the step begins before
 * `guidance_start` or ends after `guidance_end` (as shares of the timesteps).
 */
export const controlNetKeeps = (i: number, n: number, start: number, end: number): boolean =>
  !(i / n < start || (i + 1) / n > end);

/** torch.logspace(-1, 0, n) in float32: guess mode's residual scales, 0.1 (shallowest) to 1 (mid block). */
function guessScales(n: number): number[] {
  const step = 1 / (n - 1);
  return Array.from({ length: n }, (_, k) =>
    Math.fround(10 ** (k < Math.floor(n / 2) ? -1 + step * k : 0 - step * (n - 1 - k))),
  );
}

/**
 * A1111's soft injection (its ControlNet extension's "My prompt is more important" and "ControlNet is more
 * important"): residual k of n weighs 0.825^(12 − k), so the mid block of an SD 1.x/2.x net (k = 12) keeps its
 * weight and the shallowest gets 0.1; SDXL's 10 residuals take the first 10 of those 13 weights, as the extension does.
 */
export function softInjectionScales(n: number): number[] {
  return Array.from({ length: n }, (_, k) => Math.fround(0.825 ** (12 - k)));
}

/** Each residual replaced by its mean over the pixels (NHWC), broadcast back to its size. */
function pooled(x: HostTensor): HostTensor {
  const [B, H, W, C] = x.shape;
  const out = new Float32Array(x.data.length);
  for (let b = 0; b < B; b++)
    for (let c = 0; c < C; c++) {
      let s = 0;
      for (let p = 0; p < H * W; p++) s += x.data[(b * H * W + p) * C + c];
      const m = Math.fround(s / (H * W));
      for (let p = 0; p < H * W; p++) out[(b * H * W + p) * C + c] = m;
    }
  return { data: out, shape: x.shape };
}

const positiveHalf = (x: HostTensor): HostTensor => splitBatch(x, 2)[1];

/** The conditional half of SDXL's added conditioning (guess mode's nets see the positive prompt only). */
function positiveTextTime(t: HostTextTime | undefined): HostTextTime | undefined {
  if (!t) return undefined;
  const rows = t.timeIds.length / 2;
  return { textEmbeds: positiveHalf(t.textEmbeds), timeIds: t.timeIds.slice(rows) };
}

/**
 * The summed residuals of the nets active at step `i` of `n` (diffusers' `MultiControlNetModel`), each scaled by its
 * `conditioning_scale` (guess mode: times the log scales), for the UNet's input `input` (scaled latents, the guidance
 * batch when `guided`); undefined when none is active. Guess mode's nets run on the conditional half only, and the
 * unconditional half gets zeros.
 */
export async function controlNetResiduals(
  nets: readonly PreparedControlNet[],
  i: number,
  n: number,
  step: {
    input: HostTensor;
    timestep: number;
    context: HostTensor;
    textTime?: HostTextTime;
    guided: boolean;
  },
): Promise<HostControlResiduals | undefined> {
  let total: HostControlResiduals | undefined;
  for (const u of nets) {
    if (!controlNetKeeps(i, n, u.start, u.end)) continue;
    const half = (u.guessMode || u.controlMode === 'controlnet') && step.guided;
    const raw = await u.net.residualsOnHost(
      half ? positiveHalf(step.input) : step.input,
      step.timestep,
      half ? positiveHalf(step.context) : step.context,
      u.image,
      half ? positiveTextTime(step.textTime) : step.textTime,
    );
    const all = [...raw.down, raw.mid];
    const scales =
      u.guessMode && !u.globalPool
        ? guessScales(all.length).map((s) => Math.fround(s * Math.fround(u.scale)))
        : u.controlMode !== 'balanced'
          ? softInjectionScales(all.length).map((s) => Math.fround(s * Math.fround(u.scale)))
          : all.map(() => u.scale);
    let scaled = all.map((r, k) => mul(r, scales[k]));
    if (u.globalPool) scaled = scaled.map(pooled);
    if (half)
      scaled = scaled.map((r) => concat([{ data: new Float32Array(r.data.length), shape: r.shape }, r]));
    const mid = scaled.pop() as HostTensor;
    total = total
      ? { down: total.down.map((d, k) => add(d, scaled[k])), mid: add(total.mid, mid) }
      : { down: scaled, mid };
  }
  return total;
}
