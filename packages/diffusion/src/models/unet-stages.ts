import * as tf from '@tensorflow/tfjs';
import { downsample, type NormOptions, resnet, transformer2d, upsample, type Weights } from './blocks.js';
import { conv2d, groupNorm, linear, silu } from './layers.js';
import { timestepEmbedding } from './timestep-embedding.js';
import { type UNetConfig, unetLayout } from './unet-config.js';

/** Tensors handed from one UNet stage to the next. */
export interface UNetActivations {
  /** Hidden state NHWC; the input sample before the first stage. */
  readonly h: tf.Tensor;
  /** Down-path outputs still waiting for their up block (last = next one consumed). */
  readonly skips: readonly tf.Tensor[];
  /** silu(time embedding) [B, 4·C0]; null before the first stage. */
  readonly tembAct: tf.Tensor | null;
}

/**
 * One stage of the UNet forward pass: conv_in + time embedding, one down block, the mid block,
 * one up block, or the output head. Running the stages in order is the whole forward pass; a
 * caller may also load each stage's weights (the specs under `prefixes`) just before it runs.
 */
export interface UNetStage {
  /** `conv_in+time_embedding`, `down_blocks.<i>`, `mid_block`, `up_blocks.<i>`, `conv_norm_out+conv_out`. */
  readonly name: string;
  /** Weight-name prefixes (each ending in `.`) of the weights this stage reads. */
  readonly prefixes: readonly string[];
  /**
   * Returns the next activations. Tensors it creates are tidied except those returned; inputs
   * are never disposed (the caller owns them, including skips it pops).
   */
  run(w: Weights, a: UNetActivations, timestep: number, context: tf.Tensor): UNetActivations;
}

/** Runs a stage body in its own tidy scope, keeping only the activations it hands on. */
function tidyStage(body: () => UNetActivations): UNetActivations {
  const [h, tembAct, ...skips] = tf.tidy(() => {
    const a = body();
    return [a.h, a.tembAct as tf.Tensor, ...a.skips];
  });
  return { h, tembAct, skips };
}

const needTemb = (a: UNetActivations): tf.Tensor => {
  if (!a.tembAct) throw new Error('UNet stage run before conv_in+time_embedding');
  return a.tembAct;
};

/** The stages of UNet2DConditionModel's forward pass (docs/spec/diffusion.md §5.5), in execution order. */
export function unetStages(c: UNetConfig): UNetStage[] {
  const { C, heads, layers } = unetLayout(c);
  const N = C.length;
  const n = c.layers_per_block;
  const lp = c.use_linear_projection ?? false;
  const G = c.norm_num_groups;
  const norm: NormOptions = { groups: G, eps: c.norm_eps };
  const stages: UNetStage[] = [
    {
      name: 'conv_in+time_embedding',
      prefixes: ['time_embedding.', 'conv_in.'],
      run: (w, a, timestep) =>
        tidyStage(() => {
          const B = a.h.shape[0];
          const emb1 = timestepEmbedding(timestep, C[0], c.flip_sin_to_cos ?? true, c.freq_shift ?? 0);
          const emb = tf.tile(tf.tensor2d(emb1, [1, C[0]]), [B, 1]);
          const temb = linear(
            silu(linear(emb, w('time_embedding.linear_1.weight'), w('time_embedding.linear_1.bias'))),
            w('time_embedding.linear_2.weight'),
            w('time_embedding.linear_2.bias'),
          );
          const h = conv2d(a.h, w('conv_in.weight'), w('conv_in.bias'));
          return { h, skips: [h], tembAct: silu(temb) };
        }),
    },
  ];
  for (let i = 0; i < N; i++) {
    const p = `down_blocks.${i}`;
    const cross = c.down_block_types[i] === 'CrossAttnDownBlock2D';
    stages.push({
      name: p,
      prefixes: [`${p}.`],
      run: (w, a, _t, context) =>
        tidyStage(() => {
          const tembAct = needTemb(a);
          const skips = [...a.skips];
          let h = a.h;
          for (let j = 0; j < n; j++) {
            // Each sub-block in its own scope: only its output outlives it.
            h = tf.tidy(() => resnet(w, `${p}.resnets.${j}`, h, tembAct, norm));
            if (cross)
              h = tf.tidy(() =>
                transformer2d(w, `${p}.attentions.${j}`, h, context, heads[i], G, lp, layers[i]),
              );
            skips.push(h);
          }
          if (i < N - 1) {
            h = downsample(w, `${p}.downsamplers.0`, h, 'same-as-torch');
            skips.push(h);
          }
          return { h, skips, tembAct };
        }),
    });
  }
  stages.push({
    name: 'mid_block',
    prefixes: ['mid_block.'],
    run: (w, a, _t, context) =>
      tidyStage(() => {
        const tembAct = needTemb(a);
        let h = tf.tidy(() => resnet(w, 'mid_block.resnets.0', a.h, tembAct, norm));
        h = tf.tidy(() =>
          transformer2d(w, 'mid_block.attentions.0', h, context, heads[N - 1], G, lp, layers[N - 1]),
        );
        h = resnet(w, 'mid_block.resnets.1', h, tembAct, norm);
        return { h, skips: a.skips, tembAct };
      }),
  });
  const RH = [...heads].reverse();
  const RL = [...layers].reverse();
  for (let i = 0; i < N; i++) {
    const p = `up_blocks.${i}`;
    const cross = c.up_block_types[i] === 'CrossAttnUpBlock2D';
    stages.push({
      name: p,
      prefixes: [`${p}.`],
      run: (w, a, _t, context) =>
        tidyStage(() => {
          const tembAct = needTemb(a);
          const skips = [...a.skips];
          let h = a.h;
          for (let j = 0; j <= n; j++) {
            const s = skips.pop() as tf.Tensor;
            h = tf.tidy(() => resnet(w, `${p}.resnets.${j}`, tf.concat([h, s], 3), tembAct, norm));
            if (cross)
              h = tf.tidy(() => transformer2d(w, `${p}.attentions.${j}`, h, context, RH[i], G, lp, RL[i]));
          }
          if (i < N - 1) {
            // Upsample to the next skip's size so odd latent sizes work as in diffusers.
            const next = skips[skips.length - 1].shape as number[];
            h = upsample(w, `${p}.upsamplers.0`, h, [next[1], next[2]]);
          }
          return { h, skips, tembAct };
        }),
    });
  }
  stages.push({
    name: 'conv_norm_out+conv_out',
    prefixes: ['conv_norm_out.', 'conv_out.'],
    run: (w, a) =>
      tidyStage(() => {
        const h = silu(groupNorm(a.h, G, c.norm_eps, w('conv_norm_out.weight'), w('conv_norm_out.bias')));
        return { h: conv2d(h, w('conv_out.weight'), w('conv_out.bias')), skips: a.skips, tembAct: a.tembAct };
      }),
  });
  return stages;
}
