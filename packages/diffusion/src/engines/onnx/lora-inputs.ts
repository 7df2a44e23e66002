import type { OrtModule } from '@tiffin/onnx';
import type { Tensor as OrtTensor } from 'onnxruntime-node';
import type { AnyTensor } from '../../latents/tfjs-interop.js';
import { asHost } from '../../latents/tfjs-interop.js';
import type { HostBranchesByName } from '../../lora/runtime.js';
import type { LowRankBranchesByName } from '../../lora/types.js';

/** A request's run-time branches: host arrays (the pipeline's) or TF.js tensors (a TF.js caller's). */
export type RequestBranches = HostBranchesByName | LowRankBranchesByName;

import type { LoraBranchInputs } from './graph-builder.js';

/** One low-rank pair in graph layout with the scale folded into `up` (see {@link LoraBranchInputs}). */
export interface GraphBranch {
  rank: number;
  down: Float32Array;
  up: Float32Array;
}

/**
 * Per-request LoRA on one session: every LoRA-able Linear/Conv has a low-rank side branch whose
 * `down`/`up` are graph inputs with a symbolic rank, so a LoRA is a set of small tensors fed with
 * the run — no graph rebuild, no second session, base weights never written; runs without a LoRA
 * feed rank-1 zeros. Persistent branches (a LoRA merged at start-up or for a `fused` request) and
 * the request's run-time branches are concatenated along the rank axis, which sums them.
 */
export class LoraInputs {
  /** Branches applied to every run until removed (`mergeLora` on the engine's target). */
  private readonly persistent = new Map<string, readonly GraphBranch[]>();
  /** Run-time LoRAs converted to graph layout once per request. */
  private readonly converted = new WeakMap<RequestBranches, Map<string, GraphBranch[]>>();
  private zeros: Record<string, OrtTensor> | null = null;

  constructor(
    private readonly ort: OrtModule,
    readonly branches: ReadonlyMap<string, LoraBranchInputs>,
  ) {}

  has(name: string): boolean {
    return this.branches.has(name);
  }

  private info(name: string): LoraBranchInputs {
    const b = this.branches.get(name);
    if (!b) throw new Error(`no LoRA-able weight named ${name} in this graph`);
    return b;
  }

  persistentBranches(name: string): readonly GraphBranch[] | undefined {
    return this.persistent.get(name);
  }

  setPersistent(name: string, list: readonly GraphBranch[] | undefined): void {
    this.info(name);
    if (list && list.length > 0) this.persistent.set(name, list);
    else this.persistent.delete(name);
  }

  /**
   * A file pair (torch layout: down `[r, in(, kh, kw)]`, up `[out, r(, 1, 1)]`) in graph layout,
   * `factor` folded into up.
   */
  fromFile(name: string, down: Float32Array, up: Float32Array, rank: number, factor: number): GraphBranch {
    const b = this.info(name);
    const scaledUp = up.map((v) => v * factor);
    if (b.kind === 'conv') return { rank, down: Float32Array.from(down), up: scaledUp };
    return { rank, down: transpose(down, rank, b.inDim), up: transpose(scaledUp, b.outDim, rank) };
  }

  /** tfjs-layout run-time branches (down `[in, r]` / `[kh, kw, in, r]`, up `[r, out]`) → graph layout. */
  private fromRequest(name: string, downIn: AnyTensor, upIn: AnyTensor): GraphBranch {
    const b = this.info(name);
    const down = asHost(downIn);
    const up = asHost(upIn);
    const rank = up.shape[0];
    if (b.kind === 'linear') return { rank, down: down.data, up: up.data };
    // [kh, kw, in, r] → [r, in, kh, kw]; [r, out] → [out, r].
    const [kh, kw, inn] = down.shape as number[];
    const src = down.data;
    const d = new Float32Array(src.length);
    for (let y = 0; y < kh; y++)
      for (let x = 0; x < kw; x++)
        for (let i = 0; i < inn; i++)
          for (let r = 0; r < rank; r++)
            d[((r * inn + i) * kh + y) * kw + x] = src[((y * kw + x) * inn + i) * rank + r];
    return { rank, down: d, up: transpose(up.data, rank, b.outDim) };
  }

  private requestBranches(lora: RequestBranches): Map<string, GraphBranch[]> {
    let m = this.converted.get(lora);
    if (!m) {
      m = new Map();
      for (const [name, list] of lora as ReadonlyMap<string, readonly { down: AnyTensor; up: AnyTensor }[]>)
        m.set(
          name,
          list.map((br) => this.fromRequest(name, br.down, br.up)),
        );
      this.converted.set(lora, m);
    }
    return m;
  }

  private tensors(b: LoraBranchInputs, list: readonly GraphBranch[]): [OrtTensor, OrtTensor] {
    const r = list.reduce((a, x) => a + x.rank, 0);
    const one = list.length === 1 ? list[0] : null;
    const k = b.kernel;
    if (b.kind === 'linear') {
      const down = one
        ? one.down
        : concatColumns(
            list.map((x) => [x.down, x.rank]),
            b.inDim,
            r,
          );
      const up = one ? one.up : concatRows(list.map((x) => x.up));
      return [
        new this.ort.Tensor('float32', down, [b.inDim, r]),
        new this.ort.Tensor('float32', up, [r, b.outDim]),
      ];
    }
    const down = one ? one.down : concatRows(list.map((x) => x.down));
    const up = one
      ? one.up
      : concatColumns(
          list.map((x) => [x.up, x.rank]),
          b.outDim,
          r,
        );
    return [
      new this.ort.Tensor('float32', down, [r, b.inDim, k, k]),
      new this.ort.Tensor('float32', up, [b.outDim, r, 1, 1]),
    ];
  }

  /** Every branch input for one run: persistent branches, plus `lora`'s, else rank-1 zeros. */
  feeds(lora?: RequestBranches): Record<string, OrtTensor> {
    const request = lora && lora.size > 0 ? this.requestBranches(lora) : null;
    if (!request && this.persistent.size === 0) return this.zeroFeeds();
    const out: Record<string, OrtTensor> = { ...this.zeroFeeds() };
    for (const [name, b] of this.branches) {
      const list = [...(this.persistent.get(name) ?? []), ...(request?.get(name) ?? [])];
      if (list.length === 0) continue;
      [out[b.down], out[b.up]] = this.tensors(b, list);
    }
    return out;
  }

  private zeroFeeds(): Record<string, OrtTensor> {
    if (!this.zeros) {
      this.zeros = {};
      for (const b of this.branches.values()) {
        const k = b.kernel;
        const zero: GraphBranch = {
          rank: 1,
          down: new Float32Array(b.inDim * k * k),
          up: new Float32Array(b.outDim),
        };
        [this.zeros[b.down], this.zeros[b.up]] = this.tensors(b, [zero]);
      }
    }
    return this.zeros;
  }
}

/** `[rows, cols]` → `[cols, rows]`. */
function transpose(data: Float32Array, rows: number, cols: number): Float32Array {
  const t = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = data[r * cols + c];
  return t;
}

/** Stacks row-major blocks along the first axis. */
function concatRows(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Joins `[rows, c_i]` blocks along the second axis into `[rows, total]`. */
function concatColumns(
  parts: readonly (readonly [Float32Array, number])[],
  rows: number,
  total: number,
): Float32Array {
  const out = new Float32Array(rows * total);
  let col = 0;
  for (const [data, c] of parts) {
    for (let r = 0; r < rows; r++) out.set(data.subarray(r * c, (r + 1) * c), r * total + col);
    col += c;
  }
  return out;
}
