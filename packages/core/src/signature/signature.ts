import { InvalidArgument } from '../errors/index.js';
import { DTYPES, type DType, formatShape } from '../ndarray/dtype.js';

/**
 * One input or output tensor of a model, as read from the model file (or overridden by the user).
 * `shape` uses -1 for a dimension of any size (a symbolic or unknown dimension in the model);
 * `dimNames` keeps the model's names for those dimensions (`batch`, `N`), or null where it had none.
 */
export interface TensorSpec {
  readonly name: string;
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly dimNames?: readonly (string | null)[];
}

/**
 * What a model takes and returns, and how calls to it may be batched. `batchable` is inferred true when every
 * input and output has a dynamic dimension `batch_dim` (default 0); users may override both.
 */
export interface ModelSignature {
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
  readonly batchable: boolean;
  readonly batch_dim: number;
}

/** A user's correction of one tensor's inferred spec (matched by name). */
export interface TensorOverride {
  dtype?: DType;
  shape?: readonly number[];
}

/** What `saveModel(..., { signatures })` may override; anything not given stays as read from the model. */
export interface SignatureOverrides {
  inputs?: Readonly<Record<string, TensorOverride>>;
  outputs?: Readonly<Record<string, TensorOverride>>;
  batchable?: boolean;
  batch_dim?: number;
}

/** True when every tensor has a dynamic (-1) dimension at `dim`: requests can be stacked along it. */
export function inferBatchable(
  inputs: readonly TensorSpec[],
  outputs: readonly TensorSpec[],
  dim = 0,
): boolean {
  const all = [...inputs, ...outputs];
  return all.length > 0 && all.every((t) => t.shape.length > dim && t.shape[dim] === -1);
}

/** A signature from the model's tensors, batchability inferred on dimension 0. */
export function signatureFromTensors(
  inputs: readonly TensorSpec[],
  outputs: readonly TensorSpec[],
): ModelSignature {
  return { inputs, outputs, batchable: inferBatchable(inputs, outputs), batch_dim: 0 };
}

function overrideTensors(
  tensors: readonly TensorSpec[],
  overrides: Readonly<Record<string, TensorOverride>> | undefined,
  side: 'input' | 'output',
): TensorSpec[] {
  const names = new Set(tensors.map((t) => t.name));
  for (const name of Object.keys(overrides ?? {})) {
    if (!names.has(name)) {
      throw new InvalidArgument(
        `Signature override names ${side} '${name}', but the model's ${side}s are: ${[...names].join(', ')}`,
      );
    }
  }
  return tensors.map((t) => {
    const o = overrides?.[t.name];
    if (!o) return t;
    if (o.dtype !== undefined && !DTYPES.includes(o.dtype))
      throw new InvalidArgument(`Signature override of '${t.name}': unknown dtype '${String(o.dtype)}'`);
    if (o.shape !== undefined && !o.shape.every((n) => Number.isInteger(n) && n >= -1))
      throw new InvalidArgument(
        `Signature override of '${t.name}': shape must be integers (-1 for any size)`,
      );
    return { ...t, dtype: o.dtype ?? t.dtype, shape: o.shape ? [...o.shape] : t.shape };
  });
}

/** The inferred signature with the user's overrides applied (unknown tensor names are refused). */
export function applySignatureOverrides(
  inferred: ModelSignature,
  overrides: SignatureOverrides | undefined,
): ModelSignature {
  if (!overrides) return inferred;
  const inputs = overrideTensors(inferred.inputs, overrides.inputs, 'input');
  const outputs = overrideTensors(inferred.outputs, overrides.outputs, 'output');
  const batch_dim = overrides.batch_dim ?? inferred.batch_dim;
  if (!Number.isInteger(batch_dim) || batch_dim < 0)
    throw new InvalidArgument(`batch_dim must be a non-negative integer, got ${String(batch_dim)}`);
  const batchable = overrides.batchable ?? inferBatchable(inputs, outputs, batch_dim);
  if (batchable) {
    const short = [...inputs, ...outputs].find((t) => t.shape.length <= batch_dim);
    if (short)
      throw new InvalidArgument(
        `Cannot batch on dimension ${batch_dim}: tensor '${short.name}' has shape ${formatShape(short.shape)}`,
      );
  }
  return { inputs, outputs, batchable, batch_dim };
}

/** `x: float32 [-1, 4]`, as error messages and the API page show a tensor. */
export function describeTensor(t: TensorSpec): string {
  return `${t.name}: ${t.dtype} ${formatShape(t.shape)}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readTensor(v: unknown, where: string): TensorSpec {
  if (!isRecord(v) || typeof v.name !== 'string' || typeof v.dtype !== 'string' || !Array.isArray(v.shape))
    throw new InvalidArgument(`${where}: not a tensor spec ({ name, dtype, shape })`);
  if (!DTYPES.includes(v.dtype as DType)) throw new InvalidArgument(`${where}: unknown dtype '${v.dtype}'`);
  if (!v.shape.every((n) => Number.isInteger(n) && (n as number) >= -1))
    throw new InvalidArgument(`${where}: shape must be integers (-1 for any size)`);
  const dimNames = Array.isArray(v.dimNames)
    ? v.dimNames.map((d) => (typeof d === 'string' ? d : null))
    : undefined;
  return {
    name: v.name,
    dtype: v.dtype as DType,
    shape: v.shape as number[],
    ...(dimNames ? { dimNames } : {}),
  };
}

/** A signature as stored in a model's manifest (plain YAML/JSON data), checked field by field. */
export function readSignature(value: unknown, where = 'signature'): ModelSignature {
  if (!isRecord(value) || !Array.isArray(value.inputs) || !Array.isArray(value.outputs))
    throw new InvalidArgument(`${where}: expected { inputs, outputs, batchable, batch_dim }`);
  const inputs = value.inputs.map((t, i) => readTensor(t, `${where}.inputs[${i}]`));
  const outputs = value.outputs.map((t, i) => readTensor(t, `${where}.outputs[${i}]`));
  const batch_dim = typeof value.batch_dim === 'number' ? value.batch_dim : 0;
  const batchable =
    typeof value.batchable === 'boolean' ? value.batchable : inferBatchable(inputs, outputs, batch_dim);
  return { inputs, outputs, batchable, batch_dim };
}
