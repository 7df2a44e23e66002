import { DeclareOps } from '../ops/declare-ops.js';
import type { Ops } from '../ops/ops.js';
import type { WeightSpec } from '../weights/weight-spec.js';
import { type NormOptions, resnet, transformer2d, upsample } from './blocks.js';
import { TIME_IDS } from './timestep-embedding.js';
import { hasTextTimeEmbedding, type UNetConfig } from './unet-config.js';
import { type UNetBlockLayout, unetLayout } from './unet-layout.js';

/** Values handed from one UNet stage to the next. */
export interface UNetActivations<T> {
  /** Hidden state (an image); the input sample before the first stage. */
  readonly h: T;
  /** Down-path outputs still waiting for their up block (last = next one consumed). */
  readonly skips: readonly T[];
  /** silu(time embedding) `[B or 1, 4·C0]`; null before the first stage. */
  readonly tembAct: T | null;
}

/** The conditioning of one forward pass. */
export interface UNetConditioning<T> {
  /** The sinusoidal timestep embedding `[B or 1, C0]` (`timestepEmbedding`); read by the first stage only. */
  timeProj(): T;
  /** Encoder hidden states `[B, L, cross_attention_dim]`. */
  readonly context: T;
  /**
   * SDXL's added conditioning (`addition_embed_type: text_time`): the pooled, projected text embeds `[B, P]` and
   * the sinusoidal embedding of the six time ids `[B, 6·addition_time_embed_dim]` (`timeIdsEmbedding`).
   */
  textTime?(): { textEmbeds: T; timeIds: T };
  /**
   * A ControlNet's residuals (diffusers' `down_block_additional_residuals`, `mid_block_additional_residual`): one
   * per down-path output, added to the skips once the down path is done, and one added to the mid block's output.
   */
  controlResiduals?(): ControlResiduals<T>;
}

/** What ControlNets add to a UNet's forward pass, in the order the down path produces its outputs. */
export interface ControlResiduals<T> {
  readonly down: readonly T[];
  readonly mid: T;
}

/**
 * One stage of UNet2DConditionModel's forward pass (docs/spec/diffusion.md §5.5): conv_in + time embedding, one
 * down block, the mid block, one up block, or the output head. Running the stages in order is the whole forward
 * pass, on any backend; an eager caller may also load each stage's weights (those under `prefixes`) just
 * before it runs.
 */
export interface UNetStageDefinition {
  /** `conv_in+time_embedding`, `down_blocks.<i>`, `mid_block`, `up_blocks.<i>`, `conv_norm_out+conv_out`. */
  readonly name: string;
  /** Weight-name prefixes (each ending in `.`) of the weights this stage reads. */
  readonly prefixes: readonly string[];
  run<T>(o: Ops<T>, a: UNetActivations<T>, cond: UNetConditioning<T>): UNetActivations<T>;
}

const needTemb = <T>(a: UNetActivations<T>): T => {
  if (!a.tembAct) throw new Error('UNet stage run before conv_in+time_embedding');
  return a.tembAct;
};

/** The stages of the UNet, in execution order. */
export function unetStageDefinitions(c: UNetConfig): UNetStageDefinition[] {
  const { C, down, mid, up, temb: Temb } = unetLayout(c);
  const N = C.length;
  const G = c.norm_num_groups;
  const norm: NormOptions = { groups: G, eps: c.norm_eps };
  const textTime = hasTextTimeEmbedding(c);
  interface Attention<T> {
    heads: number;
    depth: number;
    onlyCross: boolean;
    context: T;
  }
  /**
   * One layer of a down, mid or up block of `cout` channels: a resnet from `cin` channels, then the transformer
   * when the block has cross-attention, each in its own scope. `input` is evaluated inside the resnet's scope.
   */
  const layer = <T>(
    o: Ops<T>,
    p: string,
    j: number,
    input: () => T,
    cin: number,
    cout: number,
    tembAct: T,
    attention: Attention<T> | null,
  ): T => {
    const h = o.block(() => resnet(o, `${p}.resnets.${j}`, input(), tembAct, norm, cin, cout));
    if (!attention) return h;
    return o.block(() =>
      transformer2d(o, `${p}.attentions.${j}`, h, attention.context, {
        channels: cout,
        heads: attention.heads,
        groups: G,
        linearProj: c.use_linear_projection ?? false,
        layers: attention.depth,
        onlyCross: attention.onlyCross,
      }),
    );
  };
  /** Layer `j`'s attention in a block of this layout, or null in a block without. */
  const attentionOf = <T>(b: UNetBlockLayout, j: number, context: T): Attention<T> | null =>
    b.depths ? { heads: b.heads, depth: b.depths[j], onlyCross: b.onlyCross, context } : null;
  /** The stage of one down or up block: its weights are under `p.`; `body` pushes onto or pops from `skips`. */
  const blockStage = (
    p: string,
    body: <T>(o: Ops<T>, h: T, skips: T[], tembAct: T, context: T) => T,
  ): UNetStageDefinition => ({
    name: p,
    prefixes: [`${p}.`],
    run(o, a, cond) {
      const tembAct = needTemb(a);
      const skips = [...a.skips];
      return { h: body(o, a.h, skips, tembAct, cond.context), skips, tembAct };
    },
  });
  const stages: UNetStageDefinition[] = [
    {
      name: 'conv_in+time_embedding',
      prefixes: ['time_embedding.', 'conv_in.', ...(textTime ? ['add_embedding.'] : [])],
      run(o, a, cond) {
        let temb = o.linear(
          o.silu(o.linear(cond.timeProj(), 'time_embedding.linear_1', Temb)),
          'time_embedding.linear_2',
          Temb,
        );
        if (textTime) {
          // SDXL: pooled text embeds and the time ids' embeddings, through their own MLP, added to the time embedding.
          if (!cond.textTime) throw new Error('this UNet needs text embeds and time ids (SDXL)');
          const added = cond.textTime();
          const joined = o.concatLast(added.textEmbeds, added.timeIds);
          temb = o.add(
            temb,
            o.linear(
              o.silu(o.linear(joined, 'add_embedding.linear_1', Temb)),
              'add_embedding.linear_2',
              Temb,
            ),
          );
        }
        const tembAct = o.silu(temb);
        const h = o.conv2d(a.h, 'conv_in', C[0], 3);
        return { h, skips: [h], tembAct };
      },
    },
  ];
  down.forEach((b, i) => {
    const p = `down_blocks.${i}`;
    stages.push(
      blockStage(p, (o, h, skips, tembAct, context) => {
        for (let j = 0; j < b.layers; j++) {
          const x = h;
          const cin = j === 0 ? C[Math.max(i - 1, 0)] : b.channels;
          h = layer(o, p, j, () => x, cin, b.channels, tembAct, attentionOf(b, j, context));
          skips.push(h);
        }
        if (i < N - 1) {
          h = o.conv2d(h, `${p}.downsamplers.0.conv`, b.channels, 3, 2);
          skips.push(h);
        }
        return h;
      }),
    );
  });
  // No mid block (mid_block_type null): the last down block's output goes straight to the first up block.
  // (A ControlNet needs the mid block: the pipeline refuses ControlNets for a UNet without one.)
  if (mid.kind !== 'none')
    stages.push({
      name: 'mid_block',
      prefixes: ['mid_block.'],
      run(o, a, cond) {
        const tembAct = needTemb(a);
        const Cm = C[N - 1];
        // diffusers adds the ControlNet's residuals to the down path's outputs (the skips), not to the mid block's input.
        const control = cond.controlResiduals?.();
        if (control && control.down.length !== a.skips.length)
          throw new Error(
            `ControlNet residuals: ${control.down.length} for ${a.skips.length} down-path outputs`,
          );
        const skips = control ? a.skips.map((s, k) => o.add(s, control.down[k])) : a.skips;
        const attention =
          mid.kind === 'cross'
            ? { heads: mid.heads, depth: mid.depth, onlyCross: false, context: cond.context }
            : null;
        let h = layer(o, 'mid_block', 0, () => a.h, Cm, Cm, tembAct, attention);
        if (mid.kind === 'cross') h = resnet(o, 'mid_block.resnets.1', h, tembAct, norm, Cm, Cm);
        if (control) h = o.add(h, control.mid);
        return { h, skips, tembAct };
      },
    });
  up.forEach((b, i) => {
    const p = `up_blocks.${i}`;
    const prev = i === 0 ? C[N - 1] : up[i - 1].channels;
    // diffusers' channel bookkeeping: the last layer's skip comes from the next-shallower level.
    const skipLast = C[Math.max(N - 2 - i, 0)];
    stages.push(
      blockStage(p, (o, h, skips, tembAct, context) => {
        for (let j = 0; j < b.layers; j++) {
          const last = j === b.layers - 1;
          const cin = (j === 0 ? prev : b.channels) + (last ? skipLast : b.channels);
          const s = skips.pop() as typeof h;
          const x = h;
          h = layer(
            o,
            p,
            j,
            () => o.concatChannels(x, s),
            cin,
            b.channels,
            tembAct,
            attentionOf(b, j, context),
          );
        }
        // Upsample to the next skip's size so odd latent sizes work as in diffusers.
        if (i < N - 1) h = upsample(o, `${p}.upsamplers.0`, h, b.channels, skips[skips.length - 1]);
        return h;
      }),
    );
  });
  stages.push({
    name: 'conv_norm_out+conv_out',
    prefixes: ['conv_norm_out.', 'conv_out.'],
    run(o, a) {
      const h = o.silu(o.groupNorm(a.h, 'conv_norm_out', G, c.norm_eps));
      return { h: o.conv2d(h, 'conv_out', c.out_channels, 3), skips: a.skips, tembAct: a.tembAct };
    },
  });
  return stages;
}

/** The whole UNet forward pass: sample (an image) → noise prediction (an image). */
export function unetForward<T>(o: Ops<T>, c: UNetConfig, sample: T, cond: UNetConditioning<T>): T {
  let a: UNetActivations<T> = { h: sample, skips: [], tembAct: null };
  for (const stage of unetStageDefinitions(c)) a = stage.run(o, a, cond);
  return a.h;
}

/** The weights the UNet reads (diffusers names, torch shapes), from its definition. */
export function unetWeightSpecs(c: UNetConfig): WeightSpec[] {
  const o = new DeclareOps();
  const size = 2 ** c.block_out_channels.length;
  const timeIds = TIME_IDS * (c.addition_time_embed_dim ?? 0);
  const textTime = () => ({
    textEmbeds: [1, (c.projection_class_embeddings_input_dim ?? 0) - timeIds],
    timeIds: [1, timeIds],
  });
  unetForward(o, c, [1, c.in_channels, size, size], {
    timeProj: () => [1, c.block_out_channels[0]],
    context: [1, 1, unetLayout(c).contextDim],
    textTime: hasTextTimeEmbedding(c) ? textTime : undefined,
  });
  return o.specs();
}
