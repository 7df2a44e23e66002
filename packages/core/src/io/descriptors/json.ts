import type { Context } from '../../context/context.js';
import {
  defaultJsonEncoder,
  type JsonEncoder,
  type JsonEncoderOptions,
} from '../../encoding/json-encoder.js';
import { parseJson, parseJsonBytes } from '../../encoding/json-parse.js';
import { writeJson } from '../../encoding/json-write.js';
import { decodeUtf8 } from '../../encoding/utf8.js';
import { BadInput } from '../../errors/index.js';
import type { HttpRequest } from '../../http/request.js';
import { buildResponse, type HttpResponse } from '../../http/response.js';
import { DEFAULT_LIMITS, type Limits } from '../../limits/limits.js';
import { jsonFromProto } from '../../wire/proto/json-from-proto.js';
import type { ProtoField, ProtoPayload, ValueMessage } from '../../wire/proto/messages.js';
import { toValueMessage } from '../../wire/proto/struct.js';
import { arrayItems, type Batching } from '../batching.js';
import { IODescriptor, registerDescriptor } from '../descriptor.js';
import type {
  ComponentsObject,
  DescriptorSpec,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '../openapi.js';
import {
  type SchemaDirection,
  type SchemaIssue,
  type SchemaModelAdapter,
  schemaModelAdapterFor,
} from '../schema-model.js';
import { requireArgs } from './common.js';

export interface JSONOptions {
  /**
   * A schema model (a zod schema or any Standard Schema object, via `@tiffin/io-json`) that validates and
   * coerces input; the handler receives the validated value. The name is the reference's.
   */
  pydantic_model?: unknown;
  /** Deprecated; any non-null value only logs a warning (docs/spec/io-descriptors.md §5.1). */
  validate_json?: boolean | null;
  /** Turns handler results into plain JSON data; defaults to `defaultJsonEncoder`. */
  json_encoder?: JsonEncoder | null;
}

let warnedValidateJson = false;

/**
 * Any JSON value (docs/spec/io-descriptors.md §5). Input: the body is parsed as JSON whatever the Content-Type says;
 * with `pydantic_model` it is validated. Output: compact JSON (docs/spec/io-descriptors.md D3); null/undefined → an empty body.
 * Exported from the package as `JSON`.
 */
export class JSONDescriptor extends IODescriptor<unknown, unknown> {
  static override readonly descriptorId = 'tiffin.io.JSON';
  readonly protoFields: readonly ProtoField[] = ['json'];
  readonly pydantic_model: unknown;
  readonly validate_json: boolean | null;
  readonly json_encoder: JsonEncoder;
  private readonly hasCustomEncoder: boolean;
  private readonly adapter: SchemaModelAdapter | null;
  /** The encoder's options for the server's depth bound, made once (they are the same on every call). */
  private encoderOptions: Readonly<JsonEncoderOptions> = Object.freeze({ maxDepth: DEFAULT_LIMITS.maxDepth });

  /** Each request sends a JSON array of items; the function gets every item of the batch in one array. */
  override readonly batching: Batching<unknown, unknown, unknown[], unknown[]> = arrayItems('JSON');

  constructor(options: JSONOptions = {}) {
    super();
    const model = options.pydantic_model ?? null;
    this.pydantic_model = model;
    // Fail at definition time, naming @tiffin/io-json, rather than on the first request.
    this.adapter = model === null ? null : schemaModelAdapterFor(model);
    this.validate_json = options.validate_json ?? null;
    if (this.validate_json !== null && !warnedValidateJson) {
      warnedValidateJson = true;
      console.warn("JSON: 'validate_json' is deprecated and has no effect");
    }
    this.hasCustomEncoder = typeof options.json_encoder === 'function';
    this.json_encoder = options.json_encoder ?? defaultJsonEncoder;
  }

  get mimeType(): string {
    return 'application/json';
  }

  override get displayName(): string {
    return 'JSON';
  }

  /** docs/spec/io-descriptors.md §5.4: a JSON string or bytes is parsed; objects and arrays are kept; anything else is an error. */
  static fromSample(sample: unknown, options: JSONOptions = {}): JSONDescriptor {
    let value: unknown;
    if (typeof sample === 'string') {
      try {
        value = parseJson(sample, { allowNonFinite: false });
      } catch (err) {
        throw new BadInput(
          `Unable to parse JSON string. Please make sure the input is a valid JSON string: ${(err as Error).message}`,
        );
      }
    } else if (sample instanceof Uint8Array) {
      try {
        value = parseJsonBytes(sample, { allowNonFinite: false });
      } catch (err) {
        throw new BadInput(
          `Unable to parse JSON bytes. Please make sure the input is a valid JSON bytes: ${(err as Error).message}`,
        );
      }
    } else if (sample !== null && typeof sample === 'object') {
      value = sample;
    } else {
      throw new BadInput(
        `Unable to infer JSON type from sample: ${String(sample)}. Please make sure the input is a valid JSON object.`,
      );
    }
    const descriptor = new JSONDescriptor(options);
    descriptor.sample = value;
    return descriptor;
  }

  fromHttpRequest(request: HttpRequest): unknown {
    const body = request.bufferedBody;
    return body === undefined
      ? request.body().then((read) => this.read(read, request.limits))
      : this.read(body, request.limits);
  }

  /** The body's JSON value (validated when a model is set: then a promise). */
  private read(body: Buffer, limits: Readonly<Limits>): unknown {
    let value: unknown;
    try {
      value = parseJson(decodeUtf8(body, 'request body'), { maxDepth: limits.maxDepth });
    } catch (err) {
      throw new BadInput(`Invalid JSON input received: ${(err as Error).message}`);
    }
    return this.adapter ? this.validateWithModel(value) : value;
  }

  private async validateWithModel(value: unknown): Promise<unknown> {
    if (!this.adapter) return value;
    const result = await this.adapter.validate(this.pydantic_model, value);
    if (result.ok) return result.value;
    throw new BadInput(`Invalid JSON input received: ${describeIssues(result.issues)}`, {
      detail: result.issues,
    });
  }

  /** Plain JSON data for a handler result: model instances → objects, then the encoder. */
  private encode(value: unknown, maxDepth: number = DEFAULT_LIMITS.maxDepth): unknown {
    const plain =
      this.adapter?.toPlain && this.pydantic_model !== null
        ? this.adapter.toPlain(this.pydantic_model, value)
        : value;
    // The server's depth bound (`serve({ limits })`) holds for what the handler returns, as for its input.
    let options = this.encoderOptions;
    if (options.maxDepth !== maxDepth) {
      options = Object.freeze({ maxDepth });
      this.encoderOptions = options;
    }
    return this.json_encoder(plain, options);
  }

  toHttpResponse(value: unknown, ctx: Context | null): HttpResponse {
    const body =
      value === null || value === undefined
        ? null
        : writeJson(this.encode(value, (ctx?.request.limits ?? DEFAULT_LIMITS).maxDepth));
    return buildResponse({ body, mediaType: 'application/json' });
  }

  // --- gRPC (docs/spec/io-descriptors.md §11.3) ---

  override async fromProto(
    message: ProtoPayload | Uint8Array,
    limits: Readonly<Limits> = DEFAULT_LIMITS,
  ): Promise<unknown> {
    const value = jsonFromProto(message, limits, 'Invalid JSON input received');
    return this.adapter ? this.validateWithModel(value) : value;
  }

  override async toProto(value: unknown, limits: Readonly<Limits> = DEFAULT_LIMITS): Promise<ValueMessage> {
    if (value === null || value === undefined) return {};
    return toValueMessage(this.encode(value, limits.maxDepth));
  }

  // --- OpenAPI (docs/spec/io-descriptors.md §5.5, D13) ---

  override openapiSchema(): SchemaObject {
    return this.schemaFor('input');
  }

  private schemaFor(direction: SchemaDirection): SchemaObject {
    // Without a model any JSON value is accepted (a list, a number, ...): the empty schema says exactly that.
    if (!this.adapter) return {};
    return this.adapter.jsonSchema(this.pydantic_model, direction).schema;
  }

  override openapiComponents(): ComponentsObject {
    if (!this.adapter) return {};
    const { schema, components } = this.adapter.jsonSchema(this.pydantic_model, 'input');
    const name = this.adapter.modelName(this.pydantic_model);
    return { schemas: { [name]: schema, ...components } };
  }

  override openapiExample(): unknown {
    return this.exampleFor('input');
  }

  /** Without a model or sample any JSON value is valid: an empty object, the most common kind of body. */
  override openapiRequestExample(): unknown {
    return this.exampleFor('input') ?? (this.adapter ? null : {});
  }

  private exampleFor(direction: SchemaDirection): unknown {
    if (this.sample !== undefined && this.sample !== null) return this.encode(this.sample);
    if (this.adapter?.example) return this.adapter.example(this.pydantic_model, direction) ?? null;
    return null;
  }

  override openapiRequestBody(): RequestBodyObject {
    return this.withDirection(this.buildRequestBody(), 'input');
  }

  override openapiResponses(): ResponseObject {
    return this.withDirection(this.buildResponses(), 'output');
  }

  /** Models describe input and output differently (defaults are optional on input). */
  private withDirection<T extends RequestBodyObject | ResponseObject>(obj: T, direction: SchemaDirection): T {
    if (!this.adapter) return obj;
    const example = this.exampleFor(direction);
    const media =
      example === null || example === undefined
        ? { schema: this.schemaFor(direction) }
        : { schema: this.schemaFor(direction), example };
    return { ...obj, content: { [this.mimeType]: media } };
  }

  override toSpec(): DescriptorSpec {
    return {
      id: JSONDescriptor.descriptorId,
      args: { has_pydantic_model: this.adapter !== null, has_json_encoder: this.hasCustomEncoder },
    };
  }

  /** docs/spec/io-descriptors.md §5.5: a spec cannot carry the model or encoder, so the result is a plain JSON(). */
  static override fromSpec(spec: DescriptorSpec): JSONDescriptor {
    const args = requireArgs(spec, 'JSON');
    if (args.has_pydantic_model || args.has_json_encoder) {
      console.warn(
        'JSON.fromSpec: the schema model and custom encoder are not carried by a spec; using JSON()',
      );
    }
    return new JSONDescriptor();
  }
}

function describeIssues(issues: readonly SchemaIssue[]): string {
  return issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

registerDescriptor(JSONDescriptor);

export { JSONDescriptor as JSON };
