import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import type { UNetConfig } from '../src/architectures/unet-config.js';
import { selectBackend } from '../src/backend.js';
import { UNet2DConditionModel } from '../src/engines/tfjs/unet.js';
import { type UNetActivations, unetStages } from '../src/engines/tfjs/unet-stages.js';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';
import { detInput, detWeight } from '../src/weights/deterministic.js';
import { WeightStore } from '../src/weights/store.js';

const SD15: UNetConfig = {
  ...(tinyConfigs('sd1').unet as unknown as UNetConfig),
  block_out_channels: [320, 640, 1280, 1280],
  down_block_types: ['CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'CrossAttnDownBlock2D', 'DownBlock2D'],
  up_block_types: ['UpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D', 'CrossAttnUpBlock2D'],
  cross_attention_dim: 768,
};

describe('UNet stages', () => {
  beforeAll(async () => {
    await selectBackend('wasm', () => {});
  });

  it('partition the weights: every weight belongs to exactly one stage', () => {
    for (const config of [SD15, tinyConfigs('sd2').unet as unknown as UNetConfig]) {
      const stages = unetStages(config);
      const N = config.block_out_channels.length;
      expect(stages.map((s) => s.name)).toEqual([
        'conv_in+time_embedding',
        ...Array.from({ length: N }, (_, i) => `down_blocks.${i}`),
        'mid_block',
        ...Array.from({ length: N }, (_, i) => `up_blocks.${i}`),
        'conv_norm_out+conv_out',
      ]);
      for (const spec of unetWeightSpecs(config)) {
        const owners = stages.filter((s) => s.prefixes.some((p) => spec.name.startsWith(p)));
        expect(
          owners.map((s) => s.name),
          spec.name,
        ).toHaveLength(1);
      }
    }
    // SD1.5's 859.5 M parameters, counted per stage.
    const params = unetWeightSpecs(SD15).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
    expect(params).toBe(859_520_964);
  });

  it('run one by one with per-stage weight stores, they give exactly predict()', () => {
    for (const flavour of ['sd1', 'sd2'] as const) {
      const config = tinyConfigs(flavour).unet as unknown as UNetConfig;
      const specs = unetWeightSpecs(config);
      const full = new WeightStore('unet', specs);
      for (const s of specs) full.setTorch(s.name, s.shape, detWeight(s.name, s.shape));
      const unet = new UNet2DConditionModel(config, full);
      const sample = tf.tensor4d(detInput('stages/sample', [2, 16, 16, 4]), [2, 16, 16, 4]);
      const ctx = tf.tensor3d(detInput('stages/context', [2, 77, 32]), [2, 77, 32]);
      const expected = unet.predict(sample, 501, ctx);

      const before = tf.memory().numTensors;
      let a: UNetActivations = { h: sample, skips: [], tembAct: null };
      for (const stage of unetStages(config)) {
        // Only this stage's weights exist while it runs.
        const own = specs.filter((s) => stage.prefixes.some((p) => s.name.startsWith(p)));
        const store = new WeightStore('unet', own);
        for (const s of own) store.setTorch(s.name, s.shape, detWeight(s.name, s.shape));
        const next = stage.run((name) => store.get(name), a, 501, ctx);
        store.dispose();
        const kept = new Set([next.h, next.tembAct, ...next.skips]);
        for (const t of [a.h, a.tembAct, ...a.skips]) if (t && t !== sample && !kept.has(t)) t.dispose();
        a = next;
      }
      expect(a.skips).toHaveLength(0);
      expect(a.h.shape).toEqual([2, 16, 16, 4]);
      const h = a.h;
      expect(tf.tidy(() => tf.max(tf.abs(tf.sub(h, expected))).dataSync()[0])).toBe(0);
      tf.dispose([a.h, a.tembAct as tf.Tensor]);
      // Every intermediate and every stage's weights are gone.
      expect(tf.memory().numTensors).toBe(before);
      tf.dispose([sample, ctx, expected]);
      unet.dispose();
    }
  });
});
