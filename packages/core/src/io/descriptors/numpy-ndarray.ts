import { isAscii } from 'node:buffer';
import type { Context } from '../../context/context.js';
import { parseJsonBytes } from '../../encoding/json-parse.js';
import { BadInput, InternalServerError, InvalidArgument } from '../../errors/index.js';
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
  normalizeDType,
  shapesMatch,
} from '../../ndarray/dtype.js';
import { NDArray, type NestedArray, resolveShape } from '../../ndarray/ndarray.js';
import type { NDArrayMessage, ProtoField, ProtoPayload } from '../../wire/proto/messages.js';
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

import type { DescriptorSpec, SchemaObject } from '../openapi.js';
import { requireArgs, typeName } from './common.js';
import { arrayFromMessage, arrayFromRawBytes, arrayToMessage } from './ndarray-message.js';

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
      request.signal,
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
    if (message instanceof Uint8Array) {
      if (!this.dtype) throw new BadInput("'serialized_bytes' requires specifying 'dtype'.");
      return this.validate(arrayFromRawBytes(message, this.dtype));
    }
    return this.validate(arrayFromMessage(message as NDArrayMessage));
  }

  override async toProto(value: NumpyNdarrayOutput, limits?: Readonly<Limits>): Promise<NDArrayMessage> {
    const arr = this.validate(this.outputArray(value));
    checkAnswerSize([arr], limits);
    return arrayToMessage(arr);
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
