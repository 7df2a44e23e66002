import type { Context } from '../context/context.js';
import { InvalidArgument, NotImplementedError } from '../errors/index.js';
import { BufferedHttpRequest, type HttpRequest } from '../http/request.js';
import { type HttpResponse, readResponseBody } from '../http/response.js';
import type { Limits } from '../limits/limits.js';
import type { FileMessage, ProtoField, ProtoPayload, StringValueMessage } from '../wire/proto/messages.js';
import type { Tensor, TensorMetadata } from '../wire/v2/tensor.js';
import type { Batching } from './batching.js';
import {
  bodyMediaType,
  bodyRequest,
  bodyTensor,
  bodyTensorForm,
  bodyTensorMetadata,
  bodyTensorText,
} from './body-tensor.js';
import type { ExampleFiles } from './example-file.js';
import type {
  ComponentsObject,
  DescriptorSpec,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from './openapi.js';
import { type WireForm, wireFormOf } from './wire-form.js';
import type { WireTypes } from './wire-types.js';

/**
 * The contract between the wire and an API function. An input descriptor turns a request (HTTP or gRPC)
 * into the value the function receives (`In`); an output descriptor turns what the function returns
 * (`Out`) into a response. Built-ins and user descriptors extend this class.
 *
 * Subclasses implement the abstract members and `openapiSchema()`; the OpenAPI request body and responses
 * are derived from the schema, `openapiExample()` and `mimeType` (see docs/custom-descriptors.md).
 *
 * The descriptor owns every wire form of its value, each with a default derived from its HTTP side:
 * HTTP (`fromHttpRequest`/`toHttpResponse`), gRPC (`fromProto`/`toProto`: by default the HTTP body in the
 * `text` or `file` member, or `serialized_bytes`), the Open Inference Protocol v2 (`tensorMetadata`/
 * `fromTensors`/`toTensors`: by default one BYTES element holding a text body) and the client's form
 * (`clientWire()`: by default from `mimeType`). No transport names a descriptor.
 * A class with a `descriptorId` registers itself with `registerDescriptor` so `descriptorFromSpec` can
 * re-create it from a manifest.
 */
export abstract class IODescriptor<In = unknown, Out = In> {
  /** Registry id (`tiffin.io.<Name>`); null for unregistered user descriptors. */
  static readonly descriptorId: string | null = null;

  /**
   * Type-only (never set): what a client sends and receives for this descriptor, for typed clients.
   * Subclasses narrow it with `declare readonly '~wire'?: WireTypes<Send, Receive>`.
   */
  declare readonly '~wire'?: WireTypes;

  /** Example value set by `fromSample`; drives OpenAPI examples. */
  sample: unknown = undefined;

  /** The oneof members of the gRPC protocol this descriptor reads and writes, preferred first. */
  abstract readonly protoFields: readonly ProtoField[];

  /** Main media type (OpenAPI consumes/produces, default response content type). */
  abstract get mimeType(): string | null;

  /**
   * Batch hooks (merge inputs, split outputs) for batchable APIs; absent when the descriptor cannot batch,
   * and then `svc.api({ batchable: true })` refuses it at registration.
   */
  readonly batching?: Batching<In, Out, unknown, unknown>;

  /** Methods the API route accepts. */
  get httpMethods(): readonly string[] {
    return ['POST'];
  }

  /** Name used in messages and OpenAPI summaries. */
  get displayName(): string {
    return this.constructor.name;
  }

  get descriptorId(): string | null {
    return (this.constructor as typeof IODescriptor).descriptorId;
  }

  /**
   * The input read from an HTTP request. A value or a promise of one: a descriptor that can decode without
   * waiting (the body already read, `request.bufferedBody`) answers at once, which saves the call a microtask
   * turn per step; callers `await` it either way.
   */
  abstract fromHttpRequest(request: HttpRequest): In | Promise<In>;

  /**
   * Load what this descriptor needs before the server is ready (a module slow to import, decoding threads),
   * so the first request does not pay for it on the event loop. Called once per service at startup; default:
   * nothing.
   */
  prepare(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * The response for `value` (or a promise of it: see `fromHttpRequest`): body, media type and the descriptor's own headers. The handler's status, headers
   * and cookies (`ctx.response`, docs/spec/io-descriptors.md §1.3 rule 4) are applied once by the HTTP route
   * (`applyResponseContext`), not here; `ctx` is given for reading (null when the value is not the result of
   * a request: tests, a multipart part).
   */
  abstract toHttpResponse(value: Out, ctx: Context | null): HttpResponse | Promise<HttpResponse>;

  /**
   * Decode a gRPC payload: the typed oneof member, or raw `serialized_bytes`. `limits` are the server's input
   * bounds (`serve({ limits })`), as `HttpRequest.limits` is on HTTP.
   *
   * Default: the HTTP body, from `serialized_bytes`, the `text` member's string or the `file` member's
   * content (when `protoFields` lists it), read by `fromHttpRequest` as a body of `mimeType`.
   */
  async fromProto(message: ProtoPayload | Uint8Array, limits?: Readonly<Limits>): Promise<In> {
    const body = protoBody(message, this.protoFields);
    if (body === null) throw noGrpcSide(this, 'input');
    return this.fromHttpRequest(
      new BufferedHttpRequest({
        method: 'POST',
        url: '/',
        headers: this.mimeType ? { 'content-type': this.mimeType } : {},
        body,
        limits,
      }),
    );
  }

  /**
   * Encode for gRPC: the payload of the `protoFields[0]` oneof member (`limits` as in `fromProto`).
   * Default: the HTTP body as the `text` member's string or the `file` member's content.
   */
  async toProto(value: Out, _limits?: Readonly<Limits>): Promise<ProtoPayload> {
    const field = this.protoFields[0];
    if (field !== 'text' && field !== 'file') throw noGrpcSide(this, 'output');
    const response = await this.toHttpResponse(value, null);
    const body = await readResponseBody(response);
    if (field === 'text') return { value: body.toString('utf8') } satisfies StringValueMessage;
    const kind = response.headers.find(([name]) => name === 'content-type')?.[1] ?? this.mimeType;
    return (kind ? { kind, content: body } : { content: body }) satisfies FileMessage;
  }

  // --- Open Inference Protocol (v2) ---

  /**
   * The tensors this descriptor reads (as an input) or writes (as an output) in the Open Inference Protocol,
   * named `name` when it has one; null when it has no tensor form (the API is then not a v2 model).
   * Default: one BYTES element holding the HTTP body, for descriptors whose body is text.
   */
  tensorMetadata(name: string): TensorMetadata[] | null {
    return bodyTensorForm(this.clientWire()) ? bodyTensorMetadata(name) : null;
  }

  /** The input value from a v2 request's tensors (malformed → 400). Default: the body tensor's text over HTTP. */
  async fromTensors(tensors: readonly Tensor[], ctx: Context): Promise<In> {
    const text = bodyTensorText(tensors, this.displayName);
    return this.fromHttpRequest(bodyRequest(ctx, text, bodyMediaType(this.clientWire(), this.mimeType)));
  }

  /** The output tensors of `value`, the one-tensor form named `name`. Default: the HTTP body as one BYTES element. */
  async toTensors(value: Out, ctx: Context, name: string): Promise<Tensor[]> {
    return [await bodyTensor(name, await this.toHttpResponse(value, ctx))];
  }

  // --- The client's form ---

  /**
   * How a client sends and receives this descriptor's value over HTTP, published in the OpenAPI document as
   * `x-tiffin-wire`; `@tiffin/client` encodes and decodes by it. Default: from `mimeType` (JSON, text,
   * multipart, else bytes).
   */
  clientWire(): WireForm {
    return wireFormOf(this.mimeType);
  }

  /**
   * JSON Schema of the value on the wire. The one OpenAPI hook a descriptor has to write; the request body and
   * the responses are derived from it, the example and `mimeType`.
   */
  openapiSchema(): SchemaObject {
    throw new NotImplementedError(`${this.displayName}.openapiSchema() is not implemented`);
  }

  /** Named schemas the schema refers to (`#/components/schemas/...`); none by default. */
  openapiComponents(): ComponentsObject | null {
    return null;
  }

  /** Example shown in the docs: the `fromSample` sample when it is a JSON string, number or boolean, else none. */
  openapiExample(): unknown {
    const sample = this.sample;
    return typeof sample === 'string' || typeof sample === 'number' || typeof sample === 'boolean'
      ? sample
      : null;
  }

  /**
   * Example of a request body for the API page and `/docs.json`: by default `openapiExample()`. Descriptors that
   * can derive a valid one from what they declare (shape and dtype, columns, a schema model) return it here when
   * no sample was given, so the page's "Try it out" sends a request the API accepts.
   */
  openapiRequestExample(): unknown {
    return this.openapiExample();
  }

  /**
   * Files standing for this input's example where no JSON value can (an image): `''` for the body, a part's
   * name for a multipart part. The server serves them and the API page pre-fills them; none by default.
   * `example` is the API's own example (`ApiOptions.example`), when it gave one.
   */
  exampleFiles(_example?: unknown): ExampleFiles {
    return {};
  }

  /** The request body: schema and example under `mimeType` (override to list several media types). */
  openapiRequestBody(): RequestBodyObject {
    return this.buildRequestBody();
  }

  /** The 200 response: schema and example under `mimeType`. */
  openapiResponses(): ResponseObject {
    return this.buildResponses();
  }

  /** Helper for subclasses: the request body object of docs/spec/io-descriptors.md §1.6 for one media type. */
  protected buildRequestBody(mediaType: string | null = this.mimeType): RequestBodyObject {
    return {
      content: { [mediaType ?? '*/*']: this.mediaTypeObject(this.openapiRequestExample()) },
      required: true,
      'x-tiffin-io-descriptor': this.toSpec(),
    };
  }

  /** Helper for subclasses: the 200 response object of docs/spec/io-descriptors.md §1.6 for one media type. */
  protected buildResponses(mediaType: string | null = this.mimeType): ResponseObject {
    return {
      description: 'Successful Response',
      content: { [mediaType ?? '*/*']: this.mediaTypeObject(this.openapiExample()) },
      'x-tiffin-io-descriptor': this.toSpec(),
    };
  }

  private mediaTypeObject(example: unknown): { schema: SchemaObject; example?: unknown } {
    return example === null || example === undefined
      ? { schema: this.openapiSchema() }
      : { schema: this.openapiSchema(), example };
  }

  /** Serializable description (for manifests and `x-tiffin-io-descriptor`); null when not describable. */
  toSpec(): DescriptorSpec | null {
    return null;
  }

  /** Re-create from `toSpec()` output. Each registered class overrides this. */
  static fromSpec(_spec: DescriptorSpec): IODescriptor {
    throw new NotImplementedError(`${this.name}.fromSpec() is not implemented`);
  }
}

/** Value an input descriptor produces. */
export type InputOf<D> = D extends IODescriptor<infer In, unknown> ? In : never;
/** Value an output descriptor accepts. */
export type OutputOf<D> = D extends IODescriptor<unknown, infer Out> ? Out : never;

/** A descriptor class that can be rebuilt from a spec. */
export interface DescriptorClass {
  readonly descriptorId: string | null;
  readonly name: string;
  fromSpec(spec: DescriptorSpec): IODescriptor;
}

const registry = new Map<string, DescriptorClass>();

/** Register a descriptor class under its `descriptorId`; the same id twice is an error. */
export function registerDescriptor(cls: DescriptorClass): void {
  const id = cls.descriptorId;
  if (!id) throw new InvalidArgument(`Descriptor class ${cls.name} has no descriptorId to register`);
  const existing = registry.get(id);
  if (existing && existing !== cls) {
    throw new InvalidArgument(`IO descriptor id '${id}' is already registered by ${existing.name}`);
  }
  registry.set(id, cls);
}

/** Rebuild a descriptor from its spec (docs/spec/io-descriptors.md §1.1 dispatcher rules). */
export function descriptorFromSpec(spec: DescriptorSpec): IODescriptor {
  if (!spec || typeof spec !== 'object' || !('id' in spec)) {
    throw new InvalidArgument(`IO descriptor spec (${JSON.stringify(spec)}) missing ID.`);
  }
  if (spec.id === null) throw new InvalidArgument('No IO descriptor spec found.');
  const cls = registry.get(spec.id);
  if (!cls) {
    throw new InvalidArgument(
      `Unknown IO descriptor id '${spec.id}'; is the package that provides it installed and imported?`,
    );
  }
  return cls.fromSpec(spec);
}

/**
 * The answer to a gRPC call that a descriptor without a gRPC side (the base class's `fromProto`/`toProto`)
 * cannot serve: 501, which gRPC answers UNIMPLEMENTED: the call asks for what the API does not offer, not a
 * server fault.
 */
export function noGrpcSide(
  descriptor: { displayName: string },
  side: 'input' | 'output',
): NotImplementedError {
  return new NotImplementedError(`${descriptor.displayName} does not support gRPC ${side}`, {
    errorCode: 501,
  });
}

/**
 * Whether a descriptor writes gRPC answers (overrides `toProto`, or answers in the `text` or `file` member as
 * the default does); checked before an API runs over gRPC.
 */
export function hasGrpcOutput(descriptor: IODescriptor): boolean {
  if (descriptor.toProto !== IODescriptor.prototype.toProto) return true;
  const field = descriptor.protoFields[0];
  return field === 'text' || field === 'file';
}

/** The HTTP body a payload carries for the default `fromProto`; null when the member is not one it reads. */
function protoBody(message: ProtoPayload | Uint8Array, accepted: readonly ProtoField[]): Buffer | null {
  if (message instanceof Uint8Array)
    return Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  const text = (message as StringValueMessage).value;
  if (accepted.includes('text') && typeof text === 'string') return Buffer.from(text, 'utf8');
  const content = (message as FileMessage).content;
  if (accepted.includes('file') && content instanceof Uint8Array)
    return Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  return null;
}
