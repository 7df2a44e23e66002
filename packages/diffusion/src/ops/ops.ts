/**
 * The operations the diffusion architectures are written over (`src/architectures/`), once, for every backend:
 * the TF.js backend runs them eagerly on tensors, the ONNX backend emits graph nodes. `T` is a backend's handle for
 * a value (a tfjs tensor, a graph value name). Parameters are named by their diffusers/transformers prefix
 * (`down_blocks.0.resnets.0.conv1`): each backend loads the weight under that name, in its own layout, and adds
 * the layer's LoRA branch where it has one. Output widths are stated (`out`) so that a declaring backend can derive
 * every weight's shape from the definition itself (`declare-ops.ts`).
 *
 * Two kinds of values flow through: *images* `[B, C, H, W]` in the logical sense (each backend keeps its own
 * memory layout: NHWC on TF.js, NCHW in ONNX graphs) and *sequences* `[B, L, D]` (features last on both).
 */
export interface Ops<T> {
  /** `x · Wᵀ + b` over the last axis with `param.weight` `[out, in]` (and `param.bias` unless `bias` is false). */
  linear(x: T, param: string, out: number, bias?: boolean): T;
  /**
   * 2-D convolution of an image with `param.weight` `[out, in, k, k]` and `param.bias`. `pad`: `symmetric` pads
   * (k-1)/2 on every side (torch's `padding=k//2`); `bottom-right` pads one row and column after (the VAE
   * encoder's downsampler). `bias` false: the layer has no `param.bias` (the tiny autoencoder's inner convs).
   */
  conv2d(
    x: T,
    param: string,
    out: number,
    kernel: number,
    stride?: number,
    pad?: ConvPadding,
    bias?: boolean,
  ): T;
  /** GroupNorm over consecutive channel groups of an image, with affine `param.weight`/`param.bias`. */
  groupNorm(x: T, param: string, groups: number, eps: number): T;
  /** LayerNorm over the last axis, with affine `param.weight`/`param.bias`. */
  layerNorm(x: T, param: string, eps: number): T;
  /**
   * Token embedding rows for integer ids `[B, L]` plus the first L rows of the position table → `[B, L, D]`
   * (tables `[vocab, D]` and `[positions, D]`).
   */
  tokenEmbedding(ids: T, tokenParam: string, positionParam: string, tables: EmbeddingTables): T;
  /** Additive causal mask `[L, L]` for the ids' length (lowest float above the diagonal); L ≤ `maxPositions`. */
  causalMask(ids: T, maxPositions: number): T;
  /** Row `positions[b]` of each sequence: x `[B, L, D]`, integer positions `[B]` → `[B, D]`. */
  pickTokens(x: T, positions: T): T;

  add(a: T, b: T): T;
  mul(a: T, b: T): T;
  /** `x · s` for a constant. */
  scale(x: T, s: number): T;
  /** `x + s` for a constant. */
  offset(x: T, s: number): T;
  silu(x: T): T;
  relu(x: T): T;
  tanh(x: T): T;
  /** Exact (erf) GELU. */
  gelu(x: T): T;
  /** `x · sigmoid(1.702 x)` (CLIP's). */
  quickGelu(x: T): T;
  exp(x: T): T;
  clip(x: T, min: number, max: number): T;

  /**
   * Multi-head scaled dot-product attention: q `[B, Lq, h·dh]`, k/v `[B, Lk, h·dh]` → `[B, Lq, h·dh]`; scores
   * multiplied by `scale`, plus the additive `mask` `[Lq, Lk]` when given.
   */
  attention(q: T, k: T, v: T, o: AttentionShape<T>): T;

  /** Image + a per-channel vector `[B or 1, C]`, broadcast over the pixels. */
  addPerChannel(image: T, vector: T): T;
  /** Image → sequence `[B, H·W, C]` (row-major pixels). */
  toTokens(image: T): T;
  /** Sequence `[B, H·W, C]` → image with the batch and spatial size of `like`. */
  toImage(tokens: T, like: T): T;
  /** Images joined along the channels. */
  concatChannels(a: T, b: T): T;
  /** Joins along the last axis. */
  concatLast(a: T, b: T): T;
  /** Splits the last axis into parts of the given sizes. */
  splitLast(x: T, sizes: readonly number[]): T[];
  /** Splits an image's channels into parts of the given sizes. */
  splitChannels(x: T, sizes: readonly number[]): T[];
  /** Nearest-neighbour upsampling ×2, or to the spatial size of `like` (odd sizes, as diffusers). */
  upsampleNearest(x: T, like?: T): T;

  /**
   * A sub-computation whose intermediates the backend may free once it returns (eager backends); graph
   * backends just run it.
   */
  block(f: () => T): T;
}

export type ConvPadding = 'symmetric' | 'bottom-right';

export interface EmbeddingTables {
  vocab: number;
  positions: number;
  dim: number;
}

export interface AttentionShape<T> {
  heads: number;
  headDim: number;
  scale: number;
  mask?: T;
}
