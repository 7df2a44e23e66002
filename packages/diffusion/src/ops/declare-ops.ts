import type { WeightKind, WeightSpec } from '../weights/weight-spec.js';
import type { AttentionShape, ConvPadding, EmbeddingTables, Ops } from './ops.js';

/** A value's logical shape: images `[B, C, H, W]`, sequences `[B, L, D]`. */
export type Shape = readonly number[];

/**
 * The operations on shapes only: running a definition with this backend yields the weights it reads, with their
 * torch shapes and kinds, in first-use order. So the weight declarations of an architecture are its definition,
 * not a second description of it that could drift.
 */
export class DeclareOps implements Ops<Shape> {
  private readonly declared = new Map<string, WeightSpec>();

  /** The weights read so far. */
  specs(): WeightSpec[] {
    return [...this.declared.values()];
  }

  private weight(name: string, shape: Shape, kind: WeightKind): void {
    const known = this.declared.get(name);
    if (known && known.shape.join() !== shape.join())
      throw new Error(`${name} is read as [${shape.join(', ')}] and as [${known.shape.join(', ')}]`);
    this.declared.set(name, { name, shape: [...shape], kind });
  }

  linear(x: Shape, param: string, out: number, bias = true): Shape {
    this.weight(`${param}.weight`, [out, x[x.length - 1]], 'linear');
    if (bias) this.weight(`${param}.bias`, [out], 'plain');
    return [...x.slice(0, -1), out];
  }

  conv2d(
    x: Shape,
    param: string,
    out: number,
    kernel: number,
    stride = 1,
    pad: ConvPadding = 'symmetric',
    bias = true,
  ): Shape {
    const [b, c, h, w] = x;
    this.weight(`${param}.weight`, [out, c, kernel, kernel], 'conv');
    if (bias) this.weight(`${param}.bias`, [out], 'plain');
    const padded = pad === 'symmetric' ? kernel - 1 : 1;
    const size = (d: number) => Math.floor((d + padded - kernel) / stride) + 1;
    return [b, out, size(h), size(w)];
  }

  private affine(param: string, features: number): void {
    this.weight(`${param}.weight`, [features], 'plain');
    this.weight(`${param}.bias`, [features], 'plain');
  }

  groupNorm(x: Shape, param: string, _groups: number, _eps: number): Shape {
    this.affine(param, x[1]);
    return x;
  }

  layerNorm(x: Shape, param: string, _eps: number): Shape {
    this.affine(param, x[x.length - 1]);
    return x;
  }

  tokenEmbedding(ids: Shape, tokenParam: string, positionParam: string, tables: EmbeddingTables): Shape {
    this.weight(tokenParam, [tables.vocab, tables.dim], 'plain');
    this.weight(positionParam, [tables.positions, tables.dim], 'plain');
    return [...ids, tables.dim];
  }

  causalMask(ids: Shape, _maxPositions: number): Shape {
    return [ids[1], ids[1]];
  }

  pickTokens(x: Shape, _positions: Shape): Shape {
    return [x[0], x[2]];
  }

  add(a: Shape, b: Shape): Shape {
    return broadcast(a, b);
  }

  mul(a: Shape, b: Shape): Shape {
    return broadcast(a, b);
  }

  scale(x: Shape): Shape {
    return x;
  }

  offset(x: Shape): Shape {
    return x;
  }

  silu(x: Shape): Shape {
    return x;
  }

  relu(x: Shape): Shape {
    return x;
  }

  tanh(x: Shape): Shape {
    return x;
  }

  gelu(x: Shape): Shape {
    return x;
  }

  quickGelu(x: Shape): Shape {
    return x;
  }

  exp(x: Shape): Shape {
    return x;
  }

  clip(x: Shape): Shape {
    return x;
  }

  attention(q: Shape, _k: Shape, _v: Shape, _o: AttentionShape<Shape>): Shape {
    return q;
  }

  addPerChannel(image: Shape, _vector: Shape): Shape {
    return image;
  }

  toTokens(image: Shape): Shape {
    const [b, c, h, w] = image;
    return [b, h * w, c];
  }

  toImage(tokens: Shape, like: Shape): Shape {
    return [like[0], tokens[2], like[2], like[3]];
  }

  concatChannels(a: Shape, b: Shape): Shape {
    return [a[0], a[1] + b[1], a[2], a[3]];
  }

  concatLast(a: Shape, b: Shape): Shape {
    return [...a.slice(0, -1), a[a.length - 1] + b[b.length - 1]];
  }

  splitLast(x: Shape, sizes: readonly number[]): Shape[] {
    return sizes.map((s) => [...x.slice(0, -1), s]);
  }

  splitChannels(x: Shape, sizes: readonly number[]): Shape[] {
    return sizes.map((s) => [x[0], s, x[2], x[3]]);
  }

  upsampleNearest(x: Shape, like?: Shape): Shape {
    return like ? [x[0], x[1], like[2], like[3]] : [x[0], x[1], 2 * x[2], 2 * x[3]];
  }

  block(f: () => Shape): Shape {
    return f();
  }
}

/** Numpy-style broadcast of two shapes. */
function broadcast(a: Shape, b: Shape): Shape {
  const n = Math.max(a.length, b.length);
  return Array.from({ length: n }, (_, i) => {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1)
      throw new Error(`shapes [${a.join(', ')}] and [${b.join(', ')}] do not broadcast`);
    return Math.max(x, y);
  });
}
