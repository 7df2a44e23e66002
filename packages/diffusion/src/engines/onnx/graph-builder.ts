import { closeSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import {
  type AttributeValue,
  DataType,
  type DataTypeCode,
  type Dim,
  encodeModel,
  type InitializerDef,
  type NodeDef,
  type TensorData,
  type ValueInfoDef,
} from '@tiffin/onnx';
import { float32ToHalf } from '../../weights/dtype.js';
import type { GraphTensors, WeightPass } from './weight-passes/weight-pass.js';

/** A torch-layout float32 weight read from the model files. */
export interface SourceTensor {
  shape: readonly number[];
  data: Float32Array;
}

/** Reads a component's weights by diffusers name (safetensors folder, or a mapped single file). */
export interface WeightSource {
  has(name: string): boolean;
  /** Torch-layout shape (checked against the model's declaration). */
  shape(name: string): readonly number[];
  read(name: string): SourceTensor;
}

/**
 * The float type the graph computes in. `f16`: weights and constants are stored as float16 and float inputs are
 * cast to float16 on entry (outputs back to float32), so callers feed and read float32 either way.
 */
export type GraphPrecision = 'f32' | 'f16';

/** How a weight's bytes are laid out in the graph. */
export type WeightLayout =
  /** as stored (norm vectors, biases, conv kernels, embeddings) */
  | 'plain'
  /** Linear `[out, in]` stored transposed `[in, out]`, so MatMul needs no Transpose node */
  | 'linear-t'
  /** Per-channel vector `[C]` shaped `[C, 1, 1]` to broadcast over NCHW */
  | 'channel';

/**
 * The low-rank side branch of one LoRA-able layer, fed as two graph inputs on every run (rank
 * dimension symbolic): Linear `y += (x · down) · up` with down `[in, r]`, up `[r, out]`; conv
 * `y += conv1×1(conv(x, down), up)` with down `[r, in, kh, kw]` (W's stride and padding) and up
 * `[out, r, 1, 1]`. Without a LoRA the run feeds rank-1 zeros.
 */
export interface LoraBranchInputs {
  kind: 'linear' | 'conv';
  down: string;
  up: string;
  inDim: number;
  outDim: number;
  /** Conv kernel size (1 for Linear). */
  kernel: number;
}

/** Page alignment of external tensors, so the runtime may map them instead of copying. */
const EXTERNAL_ALIGN = 4096;

/** Writes initializer bytes to the external data file as the graph is built (one tensor in memory at a time). */
class ExternalData {
  private readonly fd: number;
  private offset = 0;
  readonly location: string;

  /** `location`: the name the graph refers to the file by (default its own name). */
  constructor(path: string, location = basename(path)) {
    this.fd = openSync(path, 'w');
    this.location = location;
  }

  append(bytes: Uint8Array): { offset: number; length: number } {
    const pad = (EXTERNAL_ALIGN - (this.offset % EXTERNAL_ALIGN)) % EXTERNAL_ALIGN;
    if (pad) writeSync(this.fd, new Uint8Array(pad));
    const offset = this.offset + pad;
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd, bytes, written, bytes.length - written);
    this.offset = offset + bytes.length;
    return { offset, length: bytes.length };
  }

  close(): void {
    closeSync(this.fd);
  }
}

const asBytes = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Initializers at least this large go to the external file. */
const INLINE_LIMIT = 4096;

/**
 * Runs a weight pass over a built graph whose large initializers are in `externalPath`: the pass reads them one at a
 * time, what it stores and every external initializer it keeps go to a new file, which then replaces the old one (so
 * no dropped weight stays on disk).
 */
function runWeightPass(
  pass: WeightPass,
  nodes: readonly NodeDef[],
  initializers: readonly InitializerDef[],
  externalPath: string,
  location: string,
): { nodes: readonly NodeDef[]; initializers: InitializerDef[] } {
  const input = openSync(externalPath, 'r');
  const outPath = `${externalPath}.pass`;
  const output = new ExternalData(outPath, location);
  try {
    const stored = new Set<TensorData>();
    const tensors: GraphTensors = {
      bytes(init) {
        if (init.data.kind === 'raw') return init.data.bytes;
        const buf = Buffer.allocUnsafe(init.data.length);
        for (let done = 0; done < buf.length; ) {
          const n = readSync(input, buf, done, buf.length - done, init.data.offset + done);
          if (n === 0) throw new Error(`${externalPath}: ends inside initializer ${init.name}`);
          done += n;
        }
        return buf;
      },
      store(bytes) {
        const data: TensorData =
          bytes.length > INLINE_LIMIT
            ? { kind: 'external', location, ...output.append(bytes) }
            : { kind: 'raw', bytes };
        stored.add(data);
        return data;
      },
    };
    const rewritten = pass({ nodes, initializers }, tensors);
    const kept = rewritten.initializers.map((init) =>
      init.data.kind === 'external' && !stored.has(init.data)
        ? { ...init, data: { kind: 'external' as const, location, ...output.append(tensors.bytes(init)) } }
        : init,
    );
    output.close();
    closeSync(input);
    renameSync(outPath, externalPath);
    return { nodes: rewritten.nodes, initializers: kept };
  } catch (e) {
    output.close();
    closeSync(input);
    rmSync(outPath, { force: true });
    throw e;
  }
}

/** `[out, in]` → `[in, out]`. */
export function transpose2d(data: Float32Array, out: number, inn: number): Float32Array {
  const t = new Float32Array(data.length);
  for (let r = 0; r < out; r++) for (let c = 0; c < inn; c++) t[c * out + r] = data[r * inn + c];
  return t;
}

/**
 * Builds one ONNX graph: nodes are added in execution order, weights are streamed to the external
 * data file as they are first used. `finish()` returns the serialised model (graph only, small).
 */
export class GraphBuilder {
  private readonly nodes: NodeDef[] = [];
  private readonly initializers: InitializerDef[] = [];
  private readonly inputs: ValueInfoDef[] = [];
  private readonly outputs: ValueInfoDef[] = [];
  private readonly weightNames = new Map<string, string>();
  private readonly external: ExternalData;
  private counter = 0;
  /** Low-rank branch inputs per LoRA-able weight (diffusers name). */
  readonly loraBranches = new Map<string, LoraBranchInputs>();

  constructor(
    readonly name: string,
    private readonly source: WeightSource,
    private readonly externalPath: string,
    private readonly isLoraTarget: (weightName: string) => boolean = () => false,
    readonly precision: GraphPrecision = 'f32',
  ) {
    this.external = new ExternalData(externalPath);
  }

  /** The ONNX element type of weights and activations. */
  get floatType(): DataTypeCode {
    return this.precision === 'f16' ? DataType.FLOAT16 : DataType.FLOAT;
  }

  /** float32 data in the graph's float type, as bytes. */
  private floatBytes(data: Float32Array): Uint8Array {
    return asBytes(this.precision === 'f16' ? float32ToHalf(data) : data);
  }

  private fresh(hint: string): string {
    return `${hint}_${this.counter++}`;
  }

  /** A graph input; a FLOAT one is cast to the graph's float type (callers always feed float32). */
  input(name: string, elemType: DataTypeCode, shape: readonly Dim[]): string {
    this.inputs.push({ name, elemType, shape });
    if (elemType !== DataType.FLOAT || this.precision === 'f32') return name;
    return this.node('Cast', [name], { to: { kind: 'int', value: DataType.FLOAT16 } });
  }

  /** A graph output; a FLOAT one is cast back from the graph's float type. */
  output(value: string, name: string, elemType: DataTypeCode, shape: readonly Dim[]): void {
    if (elemType === DataType.FLOAT && this.precision === 'f16')
      this.node('Cast', [value], { to: { kind: 'int', value: DataType.FLOAT } }, name);
    else this.node('Identity', [value], {}, name);
    this.outputs.push({ name, elemType, shape });
  }

  /** Adds a node; returns its (first) output name. */
  node(
    opType: string,
    inputs: readonly string[],
    attributes: Readonly<Record<string, AttributeValue>> = {},
    output?: string,
    domain?: string,
  ): string {
    const out = output ?? this.fresh(opType.toLowerCase());
    this.nodes.push({ opType, inputs, outputs: [out], attributes, domain });
    return out;
  }

  /** A node with several outputs. */
  nodeN(
    opType: string,
    inputs: readonly string[],
    count: number,
    attributes: Readonly<Record<string, AttributeValue>> = {},
  ): string[] {
    const outs = Array.from({ length: count }, () => this.fresh(opType.toLowerCase()));
    this.nodes.push({ opType, inputs, outputs: outs, attributes });
    return outs;
  }

  /** An inline int64 constant (shapes, axes). */
  ints(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const name = this.fresh('const_i64');
    const data = BigInt64Array.from(values.map((v) => BigInt(v)));
    this.initializers.push({
      name,
      dataType: DataType.INT64,
      dims,
      data: { kind: 'raw', bytes: asBytes(data) },
    });
    return name;
  }

  /**
   * An inline float constant in the graph's float type (scalars; masks go external when large). `f32` keeps it
   * float32 whatever the precision: for inputs ONNX types as float (Resize scales).
   */
  floats(values: Float32Array | readonly number[], dims: readonly number[], type?: 'f32'): string {
    const name = this.fresh('const_f32');
    const data = values instanceof Float32Array ? values : Float32Array.from(values);
    const bytes = type === 'f32' ? asBytes(data) : this.floatBytes(data);
    this.initializers.push({
      name,
      dataType: type === 'f32' ? DataType.FLOAT : this.floatType,
      dims,
      data:
        bytes.length > INLINE_LIMIT
          ? { kind: 'external', location: this.external.location, ...this.external.append(bytes) }
          : { kind: 'raw', bytes },
    });
    return name;
  }

  scalar(v: number): string {
    return this.floats([v], []);
  }

  /**
   * The named model weight as an initializer (written once, reused on later calls). Its ONNX name
   * is the diffusers name, plus a layout suffix unless plain; Linear weights are stored `[in, out]`.
   */
  weight(name: string, layout: WeightLayout = 'plain'): string {
    const key = layout === 'plain' ? name : `${name}:${layout}`;
    const known = this.weightNames.get(key);
    if (known) return known;
    const t = this.source.read(name);
    let dims = [...t.shape];
    let data = t.data;
    if (layout === 'linear-t') {
      // Legacy VAE attention projections may be 1×1 convs [C, C, 1, 1].
      const [o, i] = dims;
      data = transpose2d(data, o, i);
      dims = [i, o];
    } else if (layout === 'channel') dims = [dims[0], 1, 1];
    const onnxName = layout === 'plain' ? name : layout === 'linear-t' ? `${name}.T` : `${name}.c11`;
    this.initializers.push({
      name: onnxName,
      dataType: this.floatType,
      dims,
      data: {
        kind: 'external',
        location: this.external.location,
        ...this.external.append(this.floatBytes(data)),
      },
    });
    this.weightNames.set(key, onnxName);
    return onnxName;
  }

  /**
   * The branch for a LoRA-able weight (`[out, in]` Linear or `[out, in, k, k]` conv): the graph values of its
   * `down` and `up` inputs (cast to the graph's float type), or null when the graph is built without LoRA
   * support or the weight is no LoRA target. The feed names are recorded in {@link loraBranches}.
   */
  loraInputs(
    weightName: string,
    kind: 'linear' | 'conv',
    inDim: number,
    outDim: number,
    kernel: number,
  ): { down: string; up: string } | null {
    if (!this.isLoraTarget(weightName)) return null;
    const r = `lora_rank_${this.loraBranches.size}`;
    const down = `lora.${weightName}.down`;
    const up = `lora.${weightName}.up`;
    const linear = kind === 'linear';
    const values = {
      down: this.input(down, DataType.FLOAT, linear ? [inDim, r] : [r, inDim, kernel, kernel]),
      up: this.input(up, DataType.FLOAT, linear ? [r, outDim] : [outDim, r, 1, 1]),
    };
    this.loraBranches.set(weightName, { kind, down, up, inDim, outDim, kernel });
    return values;
  }

  /** Torch-layout shape of a weight (read from the files' headers). */
  weightShape(name: string): readonly number[] {
    return this.source.shape(name);
  }

  hasWeight(name: string): boolean {
    return this.source.has(name);
  }

  /**
   * Closes the external file and serialises the graph, after `pass` (a rewrite of how weights are stored, e.g. int8
   * quantization) when one is given.
   */
  finish(opsets: Readonly<Record<string, number>>, pass?: WeightPass): Uint8Array {
    this.external.close();
    const { nodes, initializers } = pass
      ? runWeightPass(pass, this.nodes, this.initializers, this.externalPath, this.external.location)
      : { nodes: this.nodes, initializers: this.initializers };
    return encodeModel({
      graph: { name: this.name, nodes, initializers, inputs: this.inputs, outputs: this.outputs },
      opsets,
    });
  }

  /** Closes the external file without producing a model (build failed). */
  abandon(): void {
    this.external.close();
  }
}
