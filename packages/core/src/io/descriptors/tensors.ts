import type { Context } from '../../context/context.js';
import { parseJsonBytes } from '../../encoding/json-parse.js';
import { BadInput, InternalServerError, InvalidArgument } from '../../errors/index.js';
import type { HttpRequest } from '../../http/request.js';
import { buildResponse, type HttpResponse } from '../../http/response.js';
import { DEFAULT_LIMITS, type Limits } from '../../limits/limits.js';
import { concatenate, splitAlong } from '../../ndarray/batch.js';
import { dtypeKind } from '../../ndarray/dtype.js';
import { NDArray } from '../../ndarray/ndarray.js';
import type { NamedTensors } from '../../signature/named-tensors.js';
import { readSignature, type TensorSpec } from '../../signature/signature.js';
import { checkInputs } from '../../signature/tensor-check.js';
import { tensorFromJson } from '../../signature/tensor-from-json.js';
import { jsonFromProto } from '../../wire/proto/json-from-proto.js';
import type { ProtoField, ProtoPayload, ValueMessage } from '../../wire/proto/messages.js';
import { toValueMessage } from '../../wire/proto/struct.js';
import { datatypeOf } from '../../wire/v2/datatype.js';
import type { Tensor, TensorMetadata } from '../../wire/v2/tensor.js';
import { answerJson } from '../answer-json.js';
import { checkAnswerSize } from '../answer-size.js';
import { type Batching, rowsAlong } from '../batching.js';
import { IODescriptor, registerDescriptor } from '../descriptor.js';
import { jsonThreads, type MovedArray, OFF_LOOP_BODY_BYTES } from '../json-threads.js';
import type { DescriptorSpec, SchemaObject } from '../openapi.js';
import { requireArgs } from './common.js';

export interface TensorsOptions {
  /** The model's name, for messages. */
  model: string;
  /** The tensors this side carries (a model's inputs, or its outputs). */
  tensors: readonly TensorSpec[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An example value of a spec: zeros, one row where the size is free. */
function exampleOf(spec: TensorSpec): unknown {
  const shape = spec.shape.map((n) => (n === -1 ? 1 : n));
  const size = shape.reduce((a, b) => a * b, 1);
  if (size > 64) return null;
  return NDArray.zeros(shape, spec.dtype).toJSON();
}

/**
 * Several named tensors as one JSON object, `{"x": [[...]], "state": [...]}`: the input and output of a model
 * with more than one input or output. Input is checked against the model's signature (names, dtypes, shapes;
 * see `checkInputs`); batching stacks and splits every tensor along the batch dimension.
 */
export class Tensors extends IODescriptor<NamedTensors, NamedTensors> {
  static override readonly descriptorId = 'tiffin.io.Tensors';
  readonly protoFields: readonly ProtoField[] = ['json'];
  readonly model: string;
  readonly tensors: readonly TensorSpec[];

  override readonly batching: Batching<NamedTensors, NamedTensors, NamedTensors, NamedTensors> = {
    rows: (item, dim) => this.rows(item, dim),
    merge: (items, dim) => {
      const out: NamedTensors = {};
      for (const { name } of this.tensors)
        out[name] = concatenate(
          items.map((i) => i[name]!),
          dim,
        );
      return out;
    },
    batchRows: (batch, dim) => this.rows(batch, dim),
    split: (batch, rows, dim) => {
      const parts: NamedTensors[] = rows.map(() => ({}));
      for (const [name, array] of Object.entries(batch)) {
        splitAlong(array, rows, dim).forEach((p, i) => {
          parts[i]![name] = p;
        });
      }
      return parts;
    },
  };

  constructor(options: TensorsOptions) {
    super();
    if (options.tensors.length === 0)
      throw new InvalidArgument('Tensors: a model side needs at least one tensor');
    this.model = options.model;
    this.tensors = options.tensors;
  }

  get mimeType(): string {
    return 'application/json';
  }

  /** Rows along `dim`: the same for every tensor of one request, else 400. */
  private rows(item: NamedTensors, dim: number): number {
    let rows: number | undefined;
    for (const [name, array] of Object.entries(item)) {
      const n = rowsAlong(array.shape, dim, `Tensor '${name}'`);
      if (rows !== undefined && n !== rows) {
        throw new BadInput(
          `Model '${this.model}': tensors hold different numbers of rows along the batch dimension ${dim} (${rows} and ${n} in '${name}')`,
          { code: 'TENSOR_BATCH_MISMATCH' },
        );
      }
      rows = n;
    }
    return rows ?? 1;
  }

  async fromHttpRequest(request: HttpRequest): Promise<NamedTensors> {
    const body = await request.body();
    const maxDepth = request.limits.maxDepth;
    if (body.byteLength < OFF_LOOP_BODY_BYTES) return this.parseBody(body, maxDepth);
    const copy = Uint8Array.from(body);
    const got = await jsonThreads().run<Record<string, MovedArray>>(
      'tensorsFromJson',
      [copy, this.model, [...this.tensors], maxDepth],
      [copy.buffer],
      request.signal,
    );
    const arrays: NamedTensors = {};
    for (const [name, a] of Object.entries(got))
      arrays[name] = new NDArray(a.data as never, a.shape, a.dtype as never);
    return arrays;
  }

  /** The body's checked tensors; large bodies run this in a JSON thread. */
  parseBody(body: Buffer, maxDepth: number): NamedTensors {
    let parsed: unknown;
    try {
      parsed = parseJsonBytes(body, { exact: true, maxDepth });
    } catch (err) {
      throw new BadInput(`Tensors: request body is not valid JSON: ${(err as Error).message}`);
    }
    return this.fromJson(parsed);
  }

  private fromJson(parsed: unknown): NamedTensors {
    if (!isObject(parsed)) {
      throw new BadInput(
        `Model '${this.model}' takes a JSON object of named tensors: ${this.tensors.map((t) => `"${t.name}"`).join(', ')}`,
        { code: 'TENSORS_NOT_AN_OBJECT' },
      );
    }
    const arrays: NamedTensors = {};
    for (const [name, value] of Object.entries(parsed)) {
      const spec = this.tensors.find((t) => t.name === name);
      try {
        arrays[name] = tensorFromJson(value, spec);
      } catch (err) {
        // Ragged lists, values that are no numbers: the client's mistake.
        if (err instanceof BadInput && err.code === BadInput.code)
          throw new BadInput(`Tensor '${name}': ${(err as Error).message}`, { code: 'TENSOR_NOT_AN_ARRAY' });
        throw err;
      }
    }
    return checkInputs(this.model, this.tensors, arrays);
  }

  /** Open Inference Protocol: one tensor per signature tensor, under its own name. */
  override tensorMetadata(): TensorMetadata[] {
    return this.tensors.map((t) => ({ name: t.name, datatype: datatypeOf(t.dtype), shape: [...t.shape] }));
  }

  /** The model's input from protocol tensors (Open Inference Protocol): names, dtypes and shapes checked. */
  override async fromTensors(tensors: readonly Tensor[]): Promise<NamedTensors> {
    const given: NamedTensors = {};
    for (const t of tensors) {
      if (Object.hasOwn(given, t.name))
        throw new BadInput(`Model '${this.model}': tensor '${t.name}' is given twice`, {
          code: 'DUPLICATE_TENSOR',
        });
      given[t.name] = t.array;
    }
    return checkInputs(this.model, this.tensors, given);
  }

  override async toTensors(value: NamedTensors, ctx: Context): Promise<Tensor[]> {
    checkAnswerSize(Object.values(value), ctx.request.limits);
    return Object.entries(value).map(([name, array]) => ({ name, array }));
  }

  async toHttpResponse(value: NamedTensors, ctx: Context | null): Promise<HttpResponse> {
    if (!isObject(value)) throw new InternalServerError('Tensors output expects an object of NDArrays');
    for (const [name, array] of Object.entries(value)) {
      if (!(array instanceof NDArray))
        throw new InternalServerError(`Tensors output '${name}' is not an NDArray`);
    }
    checkAnswerSize(Object.values(value), ctx?.request.limits);
    const parts = await Promise.all(
      Object.entries(value).map(
        async ([name, array]) => [JSON.stringify(name), await answerJson(array)] as const,
      ),
    );
    const chunks: Buffer[] = [Buffer.from('{')];
    for (const [i, [name, json]] of parts.entries())
      chunks.push(Buffer.from(`${i > 0 ? ',' : ''}${name}:`), Buffer.from(json as Uint8Array | string));
    chunks.push(Buffer.from('}'));
    return buildResponse({ body: Buffer.concat(chunks), mediaType: 'application/json' });
  }

  override async fromProto(
    message: ProtoPayload | Uint8Array,
    limits: Readonly<Limits> = DEFAULT_LIMITS,
  ): Promise<NamedTensors> {
    const value = jsonFromProto(message, limits, 'Tensors: input is not valid JSON', true);
    return this.fromJson(value);
  }

  override async toProto(value: NamedTensors, limits?: Readonly<Limits>): Promise<ValueMessage> {
    checkAnswerSize(Object.values(value), limits);
    const plain: Record<string, unknown> = {};
    for (const [name, array] of Object.entries(value)) plain[name] = array.toJSON();
    return toValueMessage(plain);
  }

  override openapiSchema(): SchemaObject {
    const properties: Record<string, SchemaObject> = {};
    for (const t of this.tensors) {
      const kind = dtypeKind(t.dtype);
      const item: SchemaObject =
        kind === 'f' ? { type: 'number' } : kind === 'b' ? { type: 'boolean' } : { type: 'integer' };
      let schema: SchemaObject = item;
      for (let i = 0; i < t.shape.length; i++) schema = { type: 'array', items: schema };
      properties[t.name] = { ...schema, description: `${t.dtype} [${t.shape.join(', ')}]` };
    }
    return { type: 'object', properties, required: this.tensors.map((t) => t.name) };
  }

  override openapiExample(): unknown {
    const example: Record<string, unknown> = {};
    for (const t of this.tensors) {
      const value = exampleOf(t);
      if (value === null) return null;
      example[t.name] = value;
    }
    return example;
  }

  override toSpec(): DescriptorSpec {
    return {
      id: Tensors.descriptorId,
      args: { model: this.model, tensors: this.tensors.map((t) => ({ ...t })) },
    };
  }

  static override fromSpec(spec: DescriptorSpec): Tensors {
    const args = requireArgs(spec, 'Tensors') as { model?: unknown; tensors?: unknown };
    const signature = readSignature({ inputs: args.tensors, outputs: [] }, 'Tensors spec');
    return new Tensors({ model: String(args.model ?? 'model'), tensors: signature.inputs });
  }
}

registerDescriptor(Tensors);
