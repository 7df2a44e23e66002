import type { AttentionShape, ConvPadding, EmbeddingTables, Ops } from '../../ops/ops.js';
import type { GraphBuilder } from './graph-builder.js';

const int = (value: number) => ({ kind: 'int', value }) as const;
const ints = (value: readonly number[]) => ({ kind: 'ints', value }) as const;
const float = (value: number) => ({ kind: 'float', value }) as const;
const str = (value: string) => ({ kind: 'string', value }) as const;

/** How scaled-dot-product attention is expressed in the graph. */
export type AttentionKind =
  /** standard opset ops: Reshape/Transpose/MatMul/Softmax (any runtime) */
  | 'standard'
  /** com.microsoft MultiHeadAttention (ORT CPU and CUDA kernels; fused, no score transposes) */
  | 'fused';

export interface AttentionOptions {
  kind: AttentionKind;
}

/** Torch's `nearest`: asymmetric coordinates, floor. */
const NEAREST = {
  mode: str('nearest'),
  coordinate_transformation_mode: str('asymmetric'),
  nearest_mode: str('floor'),
};

/**
 * The operations as ONNX graph nodes (images NCHW, as the files lay them out): each call appends nodes to the
 * builder and returns the value's name. Weights become initializers under their diffusers names (Linear stored
 * transposed); every LoRA-able Linear/conv gets its low-rank branch as graph inputs when the builder asks for it.
 */
export class OnnxOps implements Ops<string> {
  /** The sequence length value of each ids input (computed once per input). */
  private readonly lengths = new Map<string, string>();

  constructor(
    private readonly g: GraphBuilder,
    private readonly attentionKind: AttentionKind,
  ) {}

  linear(x: string, param: string, _out: number, bias = true): string {
    const g = this.g;
    let y = g.node('MatMul', [x, g.weight(`${param}.weight`, 'linear-t')]);
    const [out, inn] = g.weightShape(`${param}.weight`);
    const lora = g.loraInputs(`${param}.weight`, 'linear', inn, out, 1);
    if (lora) y = g.node('Add', [y, g.node('MatMul', [g.node('MatMul', [x, lora.down]), lora.up])]);
    return bias ? g.node('Add', [y, g.weight(`${param}.bias`)]) : y;
  }

  conv2d(
    x: string,
    param: string,
    _out: number,
    kernel: number,
    stride = 1,
    pad: ConvPadding = 'symmetric',
    bias = true,
  ): string {
    const g = this.g;
    const p = (kernel - 1) / 2;
    // ONNX order [top, left, bottom, right].
    const pads = pad === 'symmetric' ? [p, p, p, p] : [0, 0, 1, 1];
    const attrs = { kernel_shape: ints([kernel, kernel]), strides: ints([stride, stride]), pads: ints(pads) };
    const weights = [g.weight(`${param}.weight`), ...(bias ? [g.weight(`${param}.bias`)] : [])];
    const y = g.node('Conv', [x, ...weights], attrs);
    const [out, inn] = g.weightShape(`${param}.weight`);
    const lora = g.loraInputs(`${param}.weight`, 'conv', inn, out, kernel);
    if (!lora) return y;
    // LoRA branch: `down` with W's kernel, stride and padding, then `up` as a 1×1 conv.
    const down = g.node('Conv', [x, lora.down], attrs);
    return g.node('Add', [y, g.node('Conv', [down, lora.up], { kernel_shape: ints([1, 1]) })]);
  }

  /**
   * InstanceNormalization on [B, G, C/G·H·W] (unit scale), then the per-channel affine. Works for any batch and
   * spatial size.
   */
  groupNorm(x: string, param: string, groups: number, eps: number): string {
    const g = this.g;
    const shape = g.node('Shape', [x]);
    const grouped = g.node('Reshape', [x, g.ints([0, groups, -1])]);
    const normed = g.node(
      'InstanceNormalization',
      [
        grouped,
        g.floats(new Float32Array(groups).fill(1), [groups]),
        g.floats(new Float32Array(groups), [groups]),
      ],
      { epsilon: float(eps) },
    );
    const back = g.node('Reshape', [normed, shape]);
    return g.node('Add', [
      g.node('Mul', [back, g.weight(`${param}.weight`, 'channel')]),
      g.weight(`${param}.bias`, 'channel'),
    ]);
  }

  layerNorm(x: string, param: string, eps: number): string {
    const g = this.g;
    return g.node('LayerNormalization', [x, g.weight(`${param}.weight`), g.weight(`${param}.bias`)], {
      axis: int(-1),
      epsilon: float(eps),
    });
  }

  private length(ids: string): string {
    let L = this.lengths.get(ids);
    if (!L) {
      L = this.g.node('Slice', [this.g.node('Shape', [ids]), this.g.ints([1]), this.g.ints([2])]);
      this.lengths.set(ids, L);
    }
    return L;
  }

  tokenEmbedding(ids: string, tokenParam: string, positionParam: string, _tables: EmbeddingTables): string {
    const g = this.g;
    const L = this.length(ids);
    const zero = g.ints([0]);
    const positions = g.node('Slice', [g.weight(positionParam), zero, L, zero]);
    return g.node('Add', [g.node('Gather', [g.weight(tokenParam), ids]), positions]);
  }

  causalMask(ids: string, maxPositions: number): string {
    const g = this.g;
    const L = this.length(ids);
    const P = maxPositions;
    // The most negative float of the graph's type above the diagonal (as transformers).
    const lowest = g.precision === 'f16' ? -65504 : -3.4028234663852886e38;
    const m = new Float32Array(P * P);
    for (let i = 0; i < P; i++) for (let j = i + 1; j < P; j++) m[i * P + j] = lowest;
    return g.node('Slice', [g.floats(m, [P, P]), g.ints([0, 0]), g.node('Concat', [L, L], { axis: int(0) })]);
  }

  pickTokens(x: string, positions: string): string {
    const g = this.g;
    return g.node('GatherND', [x, g.node('Unsqueeze', [positions, g.ints([1])])], { batch_dims: int(1) });
  }

  add(a: string, b: string): string {
    return this.g.node('Add', [a, b]);
  }

  mul(a: string, b: string): string {
    return this.g.node('Mul', [a, b]);
  }

  scale(x: string, s: number): string {
    return this.g.node('Mul', [x, this.g.scalar(s)]);
  }

  offset(x: string, s: number): string {
    return this.g.node('Add', [x, this.g.scalar(s)]);
  }

  silu(x: string): string {
    return this.g.node('Mul', [x, this.g.node('Sigmoid', [x])]);
  }

  relu(x: string): string {
    return this.g.node('Relu', [x]);
  }

  tanh(x: string): string {
    return this.g.node('Tanh', [x]);
  }

  /** In the pattern ORT's optimiser fuses into one Gelu kernel. */
  gelu(x: string): string {
    const g = this.g;
    const e = g.node('Erf', [g.node('Div', [x, g.scalar(Math.SQRT2)])]);
    return g.node('Mul', [g.node('Mul', [x, g.node('Add', [e, g.scalar(1)])]), g.scalar(0.5)]);
  }

  quickGelu(x: string): string {
    const g = this.g;
    return g.node('Mul', [x, g.node('Sigmoid', [g.node('Mul', [x, g.scalar(1.702)])])]);
  }

  exp(x: string): string {
    return this.g.node('Exp', [x]);
  }

  clip(x: string, min: number, max: number): string {
    return this.g.node('Clip', [x, this.g.scalar(min), this.g.scalar(max)]);
  }

  /** Fused (com.microsoft MultiHeadAttention) unless masked or asked for standard ops. */
  attention(q: string, k: string, v: string, o: AttentionShape<string>): string {
    const g = this.g;
    const { heads, headDim, scale, mask } = o;
    if (this.attentionKind === 'fused' && !mask)
      return g.node(
        'MultiHeadAttention',
        [q, k, v],
        { num_heads: int(heads), scale: float(scale) },
        undefined,
        'com.microsoft',
      );
    const split = (t: string, perm: number[]) =>
      g.node('Transpose', [g.node('Reshape', [t, g.ints([0, 0, heads, headDim])])], { perm: ints(perm) });
    const qh = split(g.node('Mul', [q, g.scalar(scale)]), [0, 2, 1, 3]);
    const kt = split(k, [0, 2, 3, 1]);
    const vh = split(v, [0, 2, 1, 3]);
    let scores = g.node('MatMul', [qh, kt]);
    if (mask) scores = g.node('Add', [scores, mask]);
    const out = g.node('MatMul', [g.node('Softmax', [scores], { axis: int(-1) }), vh]);
    return g.node('Reshape', [
      g.node('Transpose', [out], { perm: ints([0, 2, 1, 3]) }),
      g.ints([0, 0, heads * headDim]),
    ]);
  }

  addPerChannel(image: string, vector: string): string {
    return this.g.node('Add', [image, this.g.node('Unsqueeze', [vector, this.g.ints([2, 3])])]);
  }

  toTokens(image: string): string {
    const g = this.g;
    return g.node('Transpose', [g.node('Reshape', [image, g.ints([0, 0, -1])])], { perm: ints([0, 2, 1]) });
  }

  toImage(tokens: string, like: string): string {
    const g = this.g;
    return g.node('Reshape', [
      g.node('Transpose', [tokens], { perm: ints([0, 2, 1]) }),
      g.node('Shape', [like]),
    ]);
  }

  concatChannels(a: string, b: string): string {
    return this.g.node('Concat', [a, b], { axis: int(1) });
  }

  concatLast(a: string, b: string): string {
    return this.g.node('Concat', [a, b], { axis: int(-1) });
  }

  splitLast(x: string, sizes: readonly number[]): string[] {
    return this.g.nodeN('Split', [x, this.g.ints(sizes)], sizes.length, { axis: int(-1) });
  }

  splitChannels(x: string, sizes: readonly number[]): string[] {
    return this.g.nodeN('Split', [x, this.g.ints(sizes)], sizes.length, { axis: int(1) });
  }

  upsampleNearest(x: string, like?: string): string {
    const g = this.g;
    if (!like) return g.node('Resize', [x, '', g.floats([1, 1, 2, 2], [4], 'f32')], NEAREST);
    const sizes = g.node(
      'Concat',
      [
        g.node('Slice', [g.node('Shape', [x]), g.ints([0]), g.ints([2])]),
        g.node('Slice', [g.node('Shape', [like]), g.ints([2]), g.ints([4])]),
      ],
      { axis: int(0) },
    );
    return g.node('Resize', [x, '', '', sizes], NEAREST);
  }

  block(f: () => string): string {
    return f();
  }

  /** NHWC graph input → NCHW, and back for outputs (the pipeline's tensors are NHWC). */
  fromNhwc(x: string): string {
    return this.g.node('Transpose', [x], { perm: ints([0, 3, 1, 2]) });
  }

  toNhwc(x: string): string {
    return this.g.node('Transpose', [x], { perm: ints([0, 2, 3, 1]) });
  }
}
