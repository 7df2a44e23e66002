import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlNetEngine } from '../src/engines/engine-models.js';
import { mul } from '../src/latents/float32-math.js';
import { controlNetResiduals, softInjectionScales } from '../src/pipeline/controlnet-residuals.js';
import { prepareControlNets } from '../src/pipeline/controlnet-units.js';
import { StableDiffusionPipeline } from '../src/pipeline/pipeline.js';
import type { ControlMode } from '../src/pipeline/types.js';
import { writeTinyControlNet } from '../src/tiny/write-tiny-controlnet.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../src/weights/deterministic.js';

/**
 * A1111's control modes as its ControlNet extension applies them, on a real tiny ControlNet (TF.js wasm): `prompt`
 * ("My prompt is more important") is the balanced residuals times 0.825^(12 − k), both halves; `controlnet`
 * ("ControlNet is more important") is those on the conditional half and zeros on the unconditional one.
 */
let dir: string;
let pipe: StableDiffusionPipeline;
let nets: ReadonlyMap<string, ControlNetEngine>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiffin-controlnet-modes-'));
  const model = writeTinyPipeline(join(dir, 'sd'));
  const net = writeTinyControlNet(join(dir, 'net'), { seed: 'a' });
  pipe = await StableDiffusionPipeline.fromPretrained(model, {
    backend: 'wasm',
    controlnets: { a: net },
    log: () => {},
  });
  // The pipeline's own loaded nets (a private field, reached by name in the test).
  nets = (pipe as unknown as { controlnets: ReadonlyMap<string, ControlNetEngine> }).controlnets;
}, 120_000);

afterAll(async () => {
  await pipe?.dispose?.();
  rmSync(dir, { recursive: true, force: true });
});

const picture = {
  width: 32,
  height: 32,
  data: new Uint8Array(32 * 32 * 3).map((_, i) => (i * 53) % 256),
};

async function residuals(mode: ControlMode, scale = 0.7) {
  const [unit] = await prepareControlNets(
    [{ model: 'a', image: picture, conditioning_scale: scale, control_mode: mode }],
    nets,
    { width: 32, height: 32, batch: 1, guided: true },
  );
  const r = await controlNetResiduals([unit], 0, 2, {
    // NHWC latents of a 32×32 image (the tiny VAE halves each side).
    input: { data: detInput('modes/latents', [2, 16, 16, 4]), shape: [2, 16, 16, 4] },
    timestep: 500,
    context: { data: detInput('modes/context', [2, 77, 32]), shape: [2, 77, 32] },
    guided: true,
  });
  if (!r) throw new Error('no residuals');
  return [...r.down, r.mid];
}

describe('A1111 control modes', () => {
  it('soft injection weighs residual k of 13 by 0.825^(12 - k): 0.825^12 for the first, 1 for the mid block', () => {
    const s = softInjectionScales(13);
    expect(s[12]).toBe(1);
    expect(s[0]).toBe(Math.fround(0.825 ** 12));
    expect(softInjectionScales(10)).toEqual(s.slice(0, 10));
  });

  it('prompt is balanced × the soft weights; controlnet is that on the conditional half, zeros on the other', async () => {
    const balanced = await residuals('balanced', 1);
    const prompt = await residuals('prompt', 1);
    const control = await residuals('controlnet', 1);
    const soft = softInjectionScales(balanced.length);
    expect(balanced.length).toBeGreaterThan(1);
    balanced.forEach((b, k) => {
      expect(prompt[k].data).toEqual(mul(b, soft[k]).data);
      const half = b.data.length / 2;
      expect(control[k].data.subarray(0, half).every((v) => v === 0)).toBe(true);
      const want = prompt[k].data.subarray(half);
      const got = control[k].data.subarray(half);
      let err = 0;
      let size = 0;
      for (let i = 0; i < half; i++) {
        err = Math.max(err, Math.abs(got[i] - want[i]));
        size = Math.max(size, Math.abs(want[i]));
      }
      // The net run on the conditional half alone: the same sums in another batch shape.
      expect(err).toBeLessThanOrEqual(1e-5 * Math.max(1, size));
    });
  });

  it('refuses an unknown control_mode naming the field', async () => {
    await expect(
      prepareControlNets([{ model: 'a', image: picture, control_mode: 'loud' as ControlMode }], nets, {
        width: 32,
        height: 32,
        batch: 1,
        guided: true,
      }),
    ).rejects.toThrow(/controlnet\[0\]\.control_mode/);
  });
});
