import type { Ops } from '../ops/ops.js';
import type { WeightSpec } from '../weights/weight-spec.js';

/** The blocks the SD architectures share, declared (weights) and defined (forward) once over {@link Ops}. */

// ---- weight declarations (torch shapes, diffusers names) ----

export function normSpecs(p: string, c: number): WeightSpec[] {
  return [
    { name: `${p}.weight`, shape: [c], kind: 'plain' },
    { name: `${p}.bias`, shape: [c], kind: 'plain' },
  ];
}

export function convSpecs(p: string, cin: number, cout: number, k: number): WeightSpec[] {
  return [
    { name: `${p}.weight`, shape: [cout, cin, k, k], kind: 'conv' },
    { name: `${p}.bias`, shape: [cout], kind: 'plain' },
  ];
}

export function linearSpecs(p: string, cin: number, cout: number, bias = true): WeightSpec[] {
  const s: WeightSpec[] = [{ name: `${p}.weight`, shape: [cout, cin], kind: 'linear' }];
  if (bias) s.push({ name: `${p}.bias`, shape: [cout], kind: 'plain' });
  return s;
}

export function resnetSpecs(p: string, cin: number, cout: number, temb: number | null): WeightSpec[] {
  const s = [...normSpecs(`${p}.norm1`, cin), ...convSpecs(`${p}.conv1`, cin, cout, 3)];
  if (temb !== null) s.push(...linearSpecs(`${p}.time_emb_proj`, temb, cout));
  s.push(...normSpecs(`${p}.norm2`, cout), ...convSpecs(`${p}.conv2`, cout, cout, 3));
  if (cin !== cout) s.push(...convSpecs(`${p}.conv_shortcut`, cin, cout, 1));
  return s;
}

export function transformerSpecs(
  p: string,
  c: number,
  contextDim: number,
  linearProj: boolean,
  layers: number,
): WeightSpec[] {
  const s = [...normSpecs(`${p}.norm`, c)];
  const proj = (n: string) => (linearProj ? linearSpecs(`${p}.${n}`, c, c) : convSpecs(`${p}.${n}`, c, c, 1));
  s.push(...proj('proj_in'));
  for (let k = 0; k < layers; k++) {
    const b = `${p}.transformer_blocks.${k}`;
    s.push(...normSpecs(`${b}.norm1`, c), ...normSpecs(`${b}.norm2`, c), ...normSpecs(`${b}.norm3`, c));
    for (const a of ['attn1', 'attn2']) {
      const kv = a === 'attn1' ? c : contextDim;
      s.push(
        ...linearSpecs(`${b}.${a}.to_q`, c, c, false),
        ...linearSpecs(`${b}.${a}.to_k`, kv, c, false),
        ...linearSpecs(`${b}.${a}.to_v`, kv, c, false),
        ...linearSpecs(`${b}.${a}.to_out.0`, c, c),
      );
    }
    s.push(...linearSpecs(`${b}.ff.net.0.proj`, c, 8 * c), ...linearSpecs(`${b}.ff.net.2`, 4 * c, c));
  }
  s.push(...proj('proj_out'));
  return s;
}

export function vaeAttentionSpecs(p: string, c: number): WeightSpec[] {
  return [
    ...normSpecs(`${p}.group_norm`, c),
    ...linearSpecs(`${p}.to_q`, c, c),
    ...linearSpecs(`${p}.to_k`, c, c),
    ...linearSpecs(`${p}.to_v`, c, c),
    ...linearSpecs(`${p}.to_out.0`, c, c),
  ];
}

// ---- forward functions ----

export interface NormOptions {
  groups: number;
  eps: number;
}

/** ResnetBlock2D; `tembAct` is silu(temb) `[B or 1, Temb]` or null (VAE); `shortcut` when in ≠ out channels. */
export function resnet<T>(
  o: Ops<T>,
  p: string,
  x: T,
  tembAct: T | null,
  n: NormOptions,
  shortcut: boolean,
): T {
  let h = o.conv2d(o.silu(o.groupNorm(x, `${p}.norm1`, n.groups, n.eps)), `${p}.conv1`, 3);
  if (tembAct) h = o.addPerChannel(h, o.linear(tembAct, `${p}.time_emb_proj`));
  h = o.conv2d(o.silu(o.groupNorm(h, `${p}.norm2`, n.groups, n.eps)), `${p}.conv2`, 3);
  const s = shortcut ? o.conv2d(x, `${p}.conv_shortcut`, 1) : x;
  return o.add(s, h);
}

/** Nearest ×2 upsampling (or to the size of `like`), then a 3×3 conv. */
export function upsample<T>(o: Ops<T>, p: string, x: T, like?: T): T {
  return o.conv2d(o.upsampleNearest(x, like), `${p}.conv`, 3);
}

/** diffusers Attention with separate q/k/v projections; `context` null = self-attention. */
function crossAttention<T>(
  o: Ops<T>,
  p: string,
  x: T,
  context: T | null,
  channels: number,
  heads: number,
  bias: boolean,
): T {
  const src = context ?? x;
  const q = o.linear(x, `${p}.to_q`, bias);
  const k = o.linear(src, `${p}.to_k`, bias);
  const v = o.linear(src, `${p}.to_v`, bias);
  const headDim = channels / heads;
  return o.linear(o.attention(q, k, v, { heads, headDim, scale: headDim ** -0.5 }), `${p}.to_out.0`);
}

export interface TransformerOptions {
  channels: number;
  heads: number;
  groups: number;
  linearProj: boolean;
  layers: number;
}

/** Transformer2DModel with BasicTransformerBlocks (docs/spec/diffusion.md §5.4). */
export function transformer2d<T>(o: Ops<T>, p: string, x: T, context: T, t: TransformerOptions): T {
  const C = t.channels;
  let h = o.groupNorm(x, `${p}.norm`, t.groups, 1e-6);
  h = t.linearProj ? o.linear(o.toTokens(h), `${p}.proj_in`) : o.toTokens(o.conv2d(h, `${p}.proj_in`, 1));
  for (let k = 0; k < t.layers; k++) {
    const b = `${p}.transformer_blocks.${k}`;
    h = o.add(
      h,
      crossAttention(o, `${b}.attn1`, o.layerNorm(h, `${b}.norm1`, 1e-5), null, C, t.heads, false),
    );
    h = o.add(
      h,
      crossAttention(o, `${b}.attn2`, o.layerNorm(h, `${b}.norm2`, 1e-5), context, C, t.heads, false),
    );
    const proj = o.linear(o.layerNorm(h, `${b}.norm3`, 1e-5), `${b}.ff.net.0.proj`);
    const [a, gate] = o.splitLast(proj, [4 * C, 4 * C]);
    h = o.add(h, o.linear(o.mul(a, o.gelu(gate)), `${b}.ff.net.2`));
  }
  const out = t.linearProj
    ? o.toImage(o.linear(h, `${p}.proj_out`), x)
    : o.conv2d(o.toImage(h, x), `${p}.proj_out`, 1);
  return o.add(out, x);
}

/** Single-head VAE mid-block attention (docs/spec/diffusion.md §6). */
export function vaeAttention<T>(o: Ops<T>, p: string, x: T, channels: number, groups: number): T {
  const h = o.toTokens(o.groupNorm(x, `${p}.group_norm`, groups, 1e-6));
  return o.add(o.toImage(crossAttention(o, p, h, null, channels, 1, true), x), x);
}
