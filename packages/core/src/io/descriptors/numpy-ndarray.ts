import { isAscii } from 'node:buffer';
import type { Context } from '../../context/context.js';
import { parseJsonBytes } from '../../encoding/json-parse.js';
import {
  BadInput,
  InternalServerError,
  InvalidArgument,
  isTiffinError,
  truncateForMessage,
} from '../../errors/index.js';
import type { HttpRequest } from '../../http/request.js';
import { buildResponse, type HttpResponse } from '../../http/response.js';
import { checkJsonDepth } from '../../limits/depth.js';
import type { Limits } from '../../limits/limits.js';
import { concatenate, splitAlong } from '../../ndarray/batch.js';
import { DTypeConversionError, RaggedArrayError } from '../../ndarray/convert.js';
import {
  canCastSameKind,
  type DType,
  dtypeKind,
  formatShape,
  isFloatDType,
  itemSize,
  normalizeDType,
  roundToFloat16,
  shapesMatch,
} from '../../ndarray/dtype.js';
import { NDArray, type NestedArray, resolveShape } from '../../ndarray/ndarray.js';
import {
  type NDArrayDType,
  type NDArrayMessage,
  type ProtoField,
  type ProtoPayload,
  VALUE_FIELDS,
  type NDArrayValueField as ValueField,
} from '../../wire/proto/messages.js';
import { datatypeOf } from '../../wire/v2/datatype.js';
import type { Tensor, TensorMetadata } from '../../wire/v2/tensor.js';
import { answerJson } from '../answer-json.js';
import { checkAnswerSize } from '../answer-size.js';
import { type Batching, rowsAlong } from '../batching.js';
import { IODescriptor, registerDescriptor } from '../descriptor.js';
import { exampleArray, exampleElement } from '../example-values.js';
import { jsonThreads, type MovedArray, OFF_LOOP_BODY_BYTES } from '../json-threads.js';
import type { WireForm } from '../wire-form.js';
import type { NDArraySource, NestedList, WireTypes } from '../wire-types.js';

/** An integer literal of 16+ digits (not the fraction or mantissa of a float literal). */
const FLOAT_LITERAL = /[.eE]/;

import { plainArray } from '../../encoding/plain-array.js';
import type { DescriptorSpec, SchemaObject } from '../openapi.js';
import { requireArgs, typeName } from './common.js';

export interface NumpyNdarrayOptions {
  /** Expected dtype (numpy name or alias, docs/spec/io-descriptors.md §2.2). Input is converted to it; output is cast to it. */
  dtype?: DType | string | null;
  /** Expected shape; -1 is a wildcard for one dimension. */
  shape?: readonly number[] | null;
  /** Reject arrays whose dtype cannot be cast same-kind to `dtype` (400) instead of passing them on. */
  enforce_dtype?: boolean;
  /** Reject arrays whose shape does not match `shape` (400) instead of trying to reshape them. */
  enforce_shape?: boolean;
}

/** What an API function may return to a NumpyNdarray output: an NDArray, or nested arrays (inferred, 2.2). */
export type NumpyNdarrayOutput = NDArray | NestedArray;

const DTYPE_TO_PROTO: Partial<Record<DType, { enum: NDArrayDType; field: keyof NDArrayMessage }>> = {
  float32: { enum: 'DTYPE_FLOAT', field: 'float_values' },
  float64: { enum: 'DTYPE_DOUBLE', field: 'double_values' },
  bool: { enum: 'DTYPE_BOOL', field: 'bool_values' },
  int32: { enum: 'DTYPE_INT32', field: 'int32_values' },
  int64: { enum: 'DTYPE_INT64', field: 'int64_values' },
  uint32: { enum: 'DTYPE_UINT32', field: 'uint32_values' },
  uint64: { enum: 'DTYPE_UINT64', field: 'uint64_values' },
  str: { enum: 'DTYPE_STRING', field: 'string_values' },
};

const PROTO_ENUM: readonly NDArrayDType[] = [
  'DTYPE_UNSPECIFIED',
  'DTYPE_FLOAT',
  'DTYPE_DOUBLE',
  'DTYPE_BOOL',
  'DTYPE_INT32',
  'DTYPE_INT64',
  'DTYPE_UINT32',
  'DTYPE_UINT64',
  'DTYPE_STRING',
];

const FIELD_DTYPE: Record<ValueField, DType> = {
  float_values: 'float32',
  double_values: 'float64',
  bool_values: 'bool',
  int32_values: 'int32',
  int64_values: 'int64',
  uint32_values: 'uint32',
  uint64_values: 'uint64',
  string_values: 'str',
};

/**
 * An n-dimensional array as JSON nested lists (docs/spec/io-descriptors.md §2). Input: the body is always parsed as JSON
 * (the Content-Type is ignored), converted to `dtype` when given, then validated. Output: the same
 * validation, then compact JSON (docs/spec/io-descriptors.md D3). Plain nested arrays returned by a handler are accepted (2.5).
 */
export class NumpyNdarray extends IODescriptor<NDArray, NumpyNdarrayOutput> {
  static override readonly descriptorId = 'tiffin.io.NumpyNdarray';
  /** Clients send an NDArray, a typed array or nested arrays, and get nested arrays back. */
  declare readonly '~wire'?: WireTypes<NDArraySource, NestedList>;
  readonly protoFields: readonly ProtoField[] = ['ndarray'];
  readonly dtype: DType | null;
  readonly shape: readonly number[] | null;
  readonly enforce_dtype: boolean;
  readonly enforce_shape: boolean;

  /** Requests stack along `batch_dim` (numpy.concatenate); the output is split back at the same rows. */
  override readonly batching: Batching<NDArray, NumpyNdarrayOutput, NDArray, NumpyNdarrayOutput> = {
    rows: (item, dim) => rowsAlong(item.shape, dim, this.displayName),
    merge: (items, dim) => concatenate(items, dim),
    batchRows: (batch, dim) => rowsAlong(this.outputArray(batch).shape, dim, this.displayName),
    split: (batch, rows, dim) => splitAlong(this.outputArray(batch), rows, dim),
  };

  constructor(options: NumpyNdarrayOptions = {}) {
    super();
    this.dtype = options.dtype === null || options.dtype === undefined ? null : normalizeDType(options.dtype);
    if (options.shape !== null && options.shape !== undefined) {
      if (!Array.isArray(options.shape) || options.shape.some((n) => !Number.isInteger(n) || n < -1)) {
        throw new InvalidArgument(
          `NumpyNdarray: shape must be a list of integers (-1 for any size), got ${JSON.stringify(options.shape)}`,
        );
      }
      this.shape = Object.freeze([...options.shape]);
    } else this.shape = null;
    this.enforce_dtype = options.enforce_dtype ?? false;
    this.enforce_shape = options.enforce_shape ?? false;
    if (this.enforce_dtype && !this.dtype) {
      throw new InvalidArgument("'dtype' must be specified when 'enforce_dtype=True'");
    }
    if (this.enforce_shape && !this.shape) {
      throw new InvalidArgument("'shape' must be specified when 'enforce_shape=True'");
    }
  }

  get mimeType(): string {
    return 'application/json';
  }

  /** docs/spec/io-descriptors.md §2.6: dtype and shape come from the sample unless given; enforcement flags stay as passed. */
  static fromSample(sample: unknown, options: NumpyNdarrayOptions = {}): NumpyNdarray {
    if (!(sample instanceof NDArray) && !Array.isArray(sample) && !ArrayBuffer.isView(sample)) {
      throw new BadInput(
        `'NumpyNdarray.fromSample()' expects an array (NDArray, nested arrays or a typed array), not '${typeName(sample)}'.`,
      );
    }
    let arr: NDArray;
    try {
      arr = NDArray.from(sample);
    } catch (err) {
      throw new BadInput(`Given sample (${String(sample)}) is not an ND-array: ${(err as Error).message}`);
    }
    const descriptor = new NumpyNdarray({
      ...options,
      dtype: options.dtype ?? arr.dtype,
      shape: options.shape ?? arr.shape,
    });
    descriptor.sample = arr;
    return descriptor;
  }

  async fromHttpRequest(request: HttpRequest): Promise<NDArray> {
    const body = await request.body();
    const maxDepth = request.limits.maxDepth;
    if (body.byteLength < OFF_LOOP_BODY_BYTES) return this.validate(this.parseBody(body, maxDepth));
    const copy = Uint8Array.from(body);
    const got = await jsonThreads().run<MovedArray>(
      'ndarrayFromJson',
      [copy, this.dtype, maxDepth],
      [copy.buffer],
    );
    return this.validate(new NDArray(got.data as never, got.shape, got.dtype as never));
  }

  /** The body's array before validation (JSON, converted to `dtype`); large bodies run this in a JSON thread. */
  parseBody(body: Buffer, maxDepth: number): NDArray {
    const fast = this.fromBodyFast(body, maxDepth);
    if (fast) return fast;
    let parsed: unknown;
    try {
      parsed = parseJsonBytes(body, { exact: true, maxDepth });
    } catch (err) {
      throw new BadInput(`NumpyNdarray: request body is not valid JSON: ${(err as Error).message}`);
    }
    return this.arrayFromJson(parsed, 'NumpyNdarray input');
  }

  /**
   * The platform's JSON.parse is several times faster than the exact parser, and gives the same array when
   * the body is ASCII and either the dtype is a float one (a number literal becomes the same float whichever
   * parser reads it) or the body has no integer literal that may exceed 2^53 (16+ digits) and no float literal
   * (`2.0` must still infer float64). Anything else — NaN/Infinity literals, syntax errors (the exact parser
   * words them better), values a float dtype cannot take (the fallback inference must see exact literals) —
   * returns null for the exact path.
   */
  private fromBodyFast(body: Buffer, maxDepth: number): NDArray | null {
    if (!isAscii(body)) return null;
    const text = body.toString('latin1');
    const floatTarget = this.dtype !== null && isFloatDType(this.dtype);
    if (!floatTarget && (FLOAT_LITERAL.test(text) || hasLongInteger(body))) return null;
    let parsed: unknown;
    try {
      parsed = globalThis.JSON.parse(text);
    } catch {
      return null;
    }
    checkJsonDepth(parsed, text.length, maxDepth, 'NumpyNdarray input');
    if (!floatTarget) return this.arrayFromJson(parsed, 'NumpyNdarray input');
    try {
      return NDArray.from(parsed, this.dtype!);
    } catch {
      return null;
    }
  }

  /** docs/spec/io-descriptors.md §2.3 step 2: convert to `dtype`; a failed conversion falls back to inference. */
  protected arrayFromJson(parsed: unknown, what: string): NDArray {
    try {
      if (this.dtype) {
        try {
          return NDArray.from(parsed, this.dtype);
        } catch (err) {
          if (!(err instanceof DTypeConversionError)) throw err;
        }
      }
      return NDArray.from(parsed);
    } catch (err) {
      if (err instanceof RaggedArrayError) throw new BadInput(`${what}: ${err.message}`);
      throw err;
    }
  }

  /** docs/spec/io-descriptors.md §2.4: same-kind dtype cast or enforcement error, then shape check or reshape. */
  validate(arr: NDArray): NDArray {
    let out = arr;
    if (this.dtype && out.dtype !== this.dtype) {
      if (canCastSameKind(out.dtype, this.dtype)) out = out.astype(this.dtype);
      else if (this.enforce_dtype) {
        throw new BadInput(
          `NumpyNdarray: Expecting ndarray of dtype "${this.dtype}", but "${out.dtype}" was received.`,
        );
      }
    }
    if (this.shape && !shapesMatch(this.shape, out.shape)) {
      if (this.enforce_shape) {
        throw new BadInput(
          `NumpyNdarray: Expecting ndarray of shape "${formatShape(this.shape)}", but "${formatShape(out.shape)}" was received.`,
        );
      }
      try {
        out = out.reshape(resolveShape(this.shape, out.size));
      } catch {
        // docs/spec/io-descriptors.md §2.4: an impossible reshape keeps the array as it is.
      }
    }
    return out;
  }

  async toHttpResponse(value: NumpyNdarrayOutput, ctx: Context | null): Promise<HttpResponse> {
    const arr = this.validate(this.outputArray(value));
    checkAnswerSize([arr], ctx?.request.limits);
    return buildResponse({ body: await answerJson(arr), mediaType: 'application/json' });
  }

  // --- Open Inference Protocol (v2): one tensor of the declared dtype and shape ---

  override tensorMetadata(name: string): TensorMetadata[] {
    const datatype = this.dtype ? datatypeOf(this.dtype) : 'FP64';
    return [{ name, datatype, shape: this.shape ? [...this.shape] : [-1] }];
  }

  override async fromTensors(tensors: readonly Tensor[]): Promise<NDArray> {
    if (tensors.length !== 1)
      throw new BadInput(`${this.displayName} takes one input tensor, got ${tensors.length}`);
    return this.validate(tensors[0]!.array);
  }

  override async toTensors(value: NumpyNdarrayOutput, ctx: Context, name: string): Promise<Tensor[]> {
    const array = this.validate(this.outputArray(value));
    checkAnswerSize([array], ctx.request.limits);
    return [{ name, array }];
  }

  override clientWire(): WireForm {
    return this.shape ? { form: 'ndarray-json', shape: this.shape } : { form: 'ndarray-json' };
  }

  private outputArray(value: NumpyNdarrayOutput): NDArray {
    if (value instanceof NDArray) return value;
    try {
      return NDArray.from(value);
    } catch (err) {
      throw new InternalServerError(
        `NumpyNdarray output expects an NDArray or nested arrays, got ${typeName(value)}: ${(err as Error).message}`,
      );
    }
  }

  // --- gRPC (docs/spec/io-descriptors.md §11.3) ---

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<NDArray> {
    if (message instanceof Uint8Array) return this.validate(this.fromRawBytes(message));
    const msg = message as NDArrayMessage;
    const shape = msg.shape ?? [];
    let dtype: DType;
    let field: ValueField;
    const dtypeEnum = protoEnumName(msg.dtype);
    if (dtypeEnum !== 'DTYPE_UNSPECIFIED') {
      const entry = Object.entries(DTYPE_TO_PROTO).find(([, v]) => v.enum === dtypeEnum);
      dtype = entry![0] as DType;
      field = entry![1].field as ValueField;
    } else {
      const present = VALUE_FIELDS.filter((f) => (msg[f]?.length ?? 0) > 0);
      // A shape alone declares elements the message does not carry: only an empty shape is taken, never
      // allocated from the declaration (the reference's np.empty(shape) would be a few bytes asking for GiBs).
      if (present.length === 0) return this.validate(emptyArrayOfShape(shape));
      if (present.length > 1) {
        throw new BadInput(
          `Array contents can only be one of given values key. Use one of '${VALUE_FIELDS.join(', ')}' instead.`,
        );
      }
      field = present[0]!;
      dtype = FIELD_DTYPE[field];
    }
    let arr = arrayFromValues(dtype, msg[field] ?? []);
    if (shape.length > 0) arr = arr.reshape(shape);
    return this.validate(arr);
  }

  private fromRawBytes(bytes: Uint8Array): NDArray {
    if (!this.dtype) throw new BadInput("'serialized_bytes' requires specifying 'dtype'.");
    const size = itemSize(this.dtype);
    if (size === null) {
      throw new BadInput(`'serialized_bytes' cannot carry dtype '${this.dtype}' (fixed-size dtypes only)`);
    }
    if (bytes.byteLength % size !== 0) {
      throw new BadInput(
        `'serialized_bytes' length ${bytes.byteLength} is not a multiple of the ${this.dtype} item size ${size}`,
      );
    }
    // Copy into a fresh, aligned buffer (the message's bytes may sit at any offset).
    const copy = new Uint8Array(bytes);
    const n = bytes.byteLength / size;
    const view = new DataView(copy.buffer);
    switch (this.dtype) {
      case 'bool':
        return new NDArray(
          copy.map((b) => (b ? 1 : 0)),
          [n],
          'bool',
        );
      case 'float16': {
        const out = new Float32Array(n);
        for (let i = 0; i < n; i++) out[i] = halfBitsToNumber(view.getUint16(i * 2, true));
        return new NDArray(out, [n], 'float16');
      }
      default:
        return NDArray.from(rawView(this.dtype, copy.buffer)).astype(this.dtype);
    }
  }

  override async toProto(value: NumpyNdarrayOutput, limits?: Readonly<Limits>): Promise<NDArrayMessage> {
    const arr = this.validate(this.outputArray(value));
    checkAnswerSize([arr], limits);
    const mapping = DTYPE_TO_PROTO[arr.dtype];
    if (!mapping) throw new BadInput(`Unsupported dtype '${arr.dtype}' for response message.`);
    const data = arr.data as ArrayLike<unknown>;
    let values: unknown[];
    if (arr.dtype === 'bool') values = plainArray(data, (v) => v === 1);
    else if (arr.dtype === 'int64' || arr.dtype === 'uint64') values = plainArray(data, String);
    else values = plainArray(data);
    return { dtype: mapping.enum, shape: [...arr.shape], [mapping.field]: values } as NDArrayMessage;
  }

  // --- OpenAPI (docs/spec/io-descriptors.md §2.7 with D13) ---

  override openapiSchema(): SchemaObject {
    // One array level per dimension of the declared shape (a [-1, 3, 224, 224] input is four deep); without a
    // shape, a list of items.
    let items: SchemaObject = itemSchema(this.dtype);
    for (let d = (this.shape?.length ?? 1) - 1; d > 0; d--) items = { type: 'array', items };
    return { type: 'array', items, nullable: true };
  }

  /** The sample (`fromSample`), else zeros of the declared dtype in the declared shape (`-1` → 1). */
  override openapiRequestExample(): unknown {
    return this.openapiExample() ?? exampleArray(this.shape, exampleElement(this.dtype));
  }

  override openapiExample(): unknown {
    if (this.sample === undefined || this.sample === null) return null;
    if (!(this.sample instanceof NDArray) || this.sample.ndim === 0) {
      throw new BadInput('NumpyNdarray: sample must be an array.');
    }
    return this.sample.toJSON();
  }

  override toSpec(): DescriptorSpec {
    return {
      id: NumpyNdarray.descriptorId,
      args: {
        dtype: this.dtype,
        shape: this.shape ? [...this.shape] : null,
        enforce_dtype: this.enforce_dtype,
        enforce_shape: this.enforce_shape,
      },
    };
  }

  static override fromSpec(spec: DescriptorSpec): NumpyNdarray {
    return new NumpyNdarray(requireArgs(spec, 'NumpyNdarray') as NumpyNdarrayOptions);
  }
}

function itemSchema(dtype: DType | null): SchemaObject {
  if (!dtype) return { type: 'integer' };
  switch (dtypeKind(dtype)) {
    case 'b':
      return { type: 'boolean' };
    case 'f':
      return { type: 'number' };
    case 'U':
      return { type: 'string' };
    case 'O':
      return {};
    default:
      return { type: 'integer' };
  }
}

function protoEnumName(value: NDArrayDType | number | undefined): NDArrayDType {
  if (value === undefined || value === null) return 'DTYPE_UNSPECIFIED';
  if (typeof value === 'number') {
    const name = PROTO_ENUM[value];
    if (!name) throw new BadInput(`${truncateForMessage(String(value))} is invalid.`);
    return name;
  }
  if (!PROTO_ENUM.includes(value)) throw new BadInput(`${truncateForMessage(String(value))} is invalid.`);
  return value;
}

/** Build an array from a proto value field; int64/uint64 arrive as decimal strings and stay exact. */
function arrayFromValues(dtype: DType, values: readonly unknown[]): NDArray {
  try {
    switch (dtype) {
      case 'int64':
        return new NDArray(
          BigInt64Array.from(values, (v) => BigInt(v as string)),
          [values.length],
          'int64',
        );
      case 'uint64':
        return new NDArray(
          BigUint64Array.from(values, (v) => BigInt(v as string)),
          [values.length],
          'uint64',
        );
      case 'str':
        return new NDArray(values.map(String), [values.length], 'str');
      default:
        return NDArray.from(values as unknown[], dtype);
    }
  } catch (err) {
    if (isTiffinError(err)) throw err;
    throw new BadInput(`Invalid ${dtype} values in the NDArray message: ${(err as Error).message}`);
  }
}

function rawView(dtype: DType, buffer: ArrayBufferLike): ArrayBufferView {
  switch (dtype) {
    case 'int8':
      return new Int8Array(buffer);
    case 'uint8':
      return new Uint8Array(buffer);
    case 'int16':
      return new Int16Array(buffer);
    case 'uint16':
      return new Uint16Array(buffer);
    case 'int32':
      return new Int32Array(buffer);
    case 'uint32':
      return new Uint32Array(buffer);
    case 'int64':
      return new BigInt64Array(buffer);
    case 'uint64':
      return new BigUint64Array(buffer);
    case 'float32':
      return new Float32Array(buffer);
    default:
      return new Float64Array(buffer);
  }
}

/** IEEE 754 half-precision bits → number. */
function halfBitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return roundToFloat16(sign * (1 + frac / 1024) * 2 ** (exp - 15));
}

registerDescriptor(NumpyNdarray);

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/**
 * Whether a JSON body has an integer literal of 16 or more digits (one that may not survive as a double): a run
 * of digits not after a '.' (a fraction) and not followed by '.', 'e' or 'E' (a float's integer part). A byte
 * scan: several times faster than the equivalent regular expression on large bodies.
 */
export function hasLongInteger(body: Uint8Array): boolean {
  let run = 0;
  let fraction = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c >= DIGIT_0 && c <= DIGIT_9) {
      if (run === 0) fraction = i > 0 && body[i - 1] === DOT;
      run++;
      continue;
    }
    if (run >= 16 && !fraction && c !== DOT && c !== LOWER_E && c !== UPPER_E) return true;
    run = 0;
  }
  return run >= 16 && !fraction;
}

/** The array of a message with a shape and no values: only a shape of zero elements is one. */
function emptyArrayOfShape(shape: readonly number[]): NDArray {
  const dims = shape.length > 0 ? shape : [0];
  if (dims.some((n) => !Number.isSafeInteger(n) || n < 0)) {
    throw new BadInput(`NDArray message shape ${formatShape(dims)} is not a shape`);
  }
  if (!dims.includes(0)) {
    throw new BadInput(
      `NDArray message has shape ${formatShape(dims)} but no values; the values must match the shape`,
    );
  }
  return new NDArray(new Float64Array(0), [...dims], 'float64');
}
