import { InvalidArgument, NotImplementedError } from '../errors/index.js';
import type { ProtoField, ProtoPayload } from '../grpc/messages.js';
import type { HttpRequest } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import type { Limits } from '../limits/limits.js';
import type { Context } from '../service/context.js';
import type { Batching } from './batching.js';
import type {
  ComponentsObject,
  DescriptorSpec,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from './openapi.js';
import type { WireTypes } from './wire-types.js';

/**
 * The contract between the wire and an API function. An input descriptor turns a request (HTTP or gRPC)
 * into the value the function receives (`In`); an output descriptor turns what the function returns
 * (`Out`) into a response. Built-ins and user descriptors extend this class.
 *
 * Subclasses implement the abstract members and `openapiSchema()`; the OpenAPI request body and responses
 * are derived from the schema, `openapiExample()` and `mimeType` (see docs/custom-descriptors.md).
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

  abstract fromHttpRequest(request: HttpRequest): Promise<In>;

  /**
   * `ctx` carries the handler's status/headers/cookies (docs/spec/io-descriptors.md §1.3 rule 4); null when the value is not the
   * result of a request (e.g. Multipart composes children with the same ctx, tests pass null).
   */
  abstract toHttpResponse(value: Out, ctx: Context | null): Promise<HttpResponse>;

  /**
   * Decode a gRPC payload: the typed oneof member, or raw `serialized_bytes`. `limits` are the server's input
   * bounds (`serve({ limits })`), as `HttpRequest.limits` is on HTTP.
   */
  fromProto(_message: ProtoPayload | Uint8Array, _limits?: Readonly<Limits>): Promise<In> {
    return Promise.reject(noGrpcSide(this, 'input'));
  }

  /** Encode for gRPC: the payload of the `protoFields[0]` oneof member (`limits` as in `fromProto`). */
  toProto(_value: Out, _limits?: Readonly<Limits>): Promise<ProtoPayload> {
    return Promise.reject(noGrpcSide(this, 'output'));
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

export function registeredDescriptors(): ReadonlyMap<string, DescriptorClass> {
  return registry;
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

/** Whether a descriptor writes gRPC answers (overrides `toProto`); checked before an API runs over gRPC. */
export function hasGrpcOutput(descriptor: IODescriptor): boolean {
  return descriptor.toProto !== IODescriptor.prototype.toProto;
}
