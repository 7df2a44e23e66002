import { randomBytes } from 'node:crypto';
import type { Context } from '../../context/context.js';
import {
  BadInput,
  InternalServerError,
  InvalidArgument,
  NotImplementedError,
  truncateForMessage,
} from '../../errors/index.js';
import { parseMediaType } from '../../http/media-type.js';
import { BufferedHttpRequest, type FormPart, type HttpRequest } from '../../http/request.js';
import { buildResponse, type HttpResponse, readResponseBody } from '../../http/response.js';
import type { Limits } from '../../limits/limits.js';
import type { MultipartMessage, PartMessage, ProtoField, ProtoPayload } from '../../wire/proto/messages.js';
import {
  descriptorFromSpec,
  type InputOf,
  IODescriptor,
  type OutputOf,
  registerDescriptor,
} from '../descriptor.js';
import type { ExampleFile, ExampleFiles } from '../example-file.js';
import type { ComponentsObject, DescriptorSpec, SchemaObject } from '../openapi.js';
import type { WireForm } from '../wire-form.js';
import type { WireReceive, WireSend, WireTypes } from '../wire-types.js';
import { requireArgs, typeName } from './common.js';

/** The children of a Multipart, by part name, in declaration order. */
export type MultipartFields = Record<string, IODescriptor>;

/** What the API function receives / returns: one value per part name. */
export type MultipartValue = Record<string, unknown>;

/** The handler's argument: each part's value typed by its child descriptor. */
export type MultipartInput<F extends MultipartFields> = { [K in keyof F]: InputOf<F[K]> };

/** What the handler returns: each field's value typed by its child descriptor. */
export type MultipartOutput<F extends MultipartFields> = { [K in keyof F]: OutputOf<F[K]> };

/**
 * A multipart/form-data body whose named parts are read by child descriptors (docs/spec/io-descriptors.md §9). The API
 * function gets one object keyed by part name; every declared part must be present (docs/spec/io-descriptors.md D12). Output is a
 * multipart/form-data body with one part per declared field, in declaration order.
 */
export class Multipart<F extends MultipartFields = MultipartFields> extends IODescriptor<
  MultipartInput<F>,
  MultipartOutput<F>
> {
  static override readonly descriptorId = 'tiffin.io.Multipart';
  /** Clients send and receive one value per part, each as its child descriptor's. */
  declare readonly '~wire'?: WireTypes<
    { [K in keyof F]: WireSend<F[K]> },
    { [K in keyof F]: WireReceive<F[K]> }
  >;
  readonly protoFields: readonly ProtoField[] = ['multipart'];
  readonly fields: Readonly<F>;

  constructor(fields: F) {
    super();
    if (!fields || typeof fields !== 'object') {
      throw new InvalidArgument('Multipart needs an object of child descriptors keyed by part name');
    }
    for (const [name, child] of Object.entries(fields)) {
      if (child instanceof Multipart) {
        throw new InvalidArgument('Multipart IO can not contain nested Multipart IO descriptor');
      }
      if (!(child instanceof IODescriptor)) {
        throw new InvalidArgument(
          `Multipart field '${name}' is not an IO descriptor (got ${typeName(child)})`,
        );
      }
    }
    this.fields = Object.freeze({ ...fields });
  }

  get mimeType(): string {
    return 'multipart/form-data';
  }

  override get displayName(): string {
    return `Multipart(${Object.entries(this.fields)
      .map(([k, d]) => `${k}=${d.displayName}`)
      .join(',')})`;
  }

  static fromSample(_sample: unknown, _options?: unknown): never {
    throw new NotImplementedError("'fromSample' is not supported for Multipart.");
  }

  async fromHttpRequest(request: HttpRequest): Promise<MultipartInput<F>> {
    const header = request.headers.get('content-type');
    if (!header) throw new BadInput('Multipart input requires a Content-Type header (multipart/form-data)');
    if (request.contentType?.essence !== 'multipart/form-data') {
      throw new BadInput(
        `Multipart only accepts \`multipart/form-data\` as Content-Type header, got ${truncateForMessage(header)} instead.`,
      );
    }
    const parts = await request.formData();
    // Duplicate names: the first occurrence's position, the last one's value (docs/spec/io-descriptors.md §9.2).
    const byName = new Map<string, FormPart>();
    for (const part of parts) byName.set(part.name, part);
    const expected = Object.keys(this.fields);
    const missing = expected.filter((name) => !byName.has(name));
    if (missing.length > 0) {
      const received = [...byName.keys()];
      throw new BadInput(
        `Multipart input is missing part(s) ${missing.map((m) => `'${m}'`).join(', ')}: expected parts ${expected.join(', ')}; received ${received.length ? truncateForMessage(received.join(', ')) : '(none)'}`,
        { detail: { expected, received, missing } },
      );
    }
    const entries = Object.entries(this.fields as MultipartFields);
    const results = await Promise.allSettled(
      entries.map(async ([name, child]) => child.fromHttpRequest(subRequest(request, byName.get(name)!))),
    );
    return collect(entries, results) as MultipartInput<F>;
  }

  async toHttpResponse(result: MultipartOutput<F>, _ctx: Context | null): Promise<HttpResponse> {
    const value = result as MultipartValue;
    const entries = this.checkedEntries(value, 'output');
    const settled = await Promise.allSettled(
      entries.map(async ([name, child]) => child.toHttpResponse(value[name], null)),
    );
    const responses = collect(entries, settled);
    const boundary = randomBytes(16).toString('hex');
    const chunks: Buffer[] = [];
    for (const [name] of entries) {
      const res = responses[name] as HttpResponse;
      const disposition = res.headers.find(([h]) => h === 'content-disposition')?.[1];
      const filename = disposition ? filenameOf(disposition) : undefined;
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"`;
      if (filename !== undefined) head += `; filename="${filename}"`;
      head += '\r\n';
      for (const [h, v] of res.headers) if (h !== 'content-disposition') head += `${h}: ${v}\r\n`;
      chunks.push(Buffer.from(`${head}\r\n`, 'utf8'), await readResponseBody(res), Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    return buildResponse({
      body: Buffer.concat(chunks),
      mediaType: `multipart/form-data; boundary=${boundary}`,
    });
  }

  /** One part per field, each in its child's form. */
  override clientWire(): WireForm {
    const parts: Record<string, WireForm> = {};
    for (const [name, child] of Object.entries(this.fields)) parts[name] = child.clientWire();
    return { form: 'multipart', parts };
  }

  /** Every declared field must be in the result; extra keys are ignored. */
  private checkedEntries(value: MultipartValue, what: string): Array<[string, IODescriptor]> {
    if (!value || typeof value !== 'object') {
      throw new InternalServerError(
        `Multipart ${what} expects an object keyed by part name, got ${typeName(value)}`,
      );
    }
    const missing = Object.keys(this.fields).filter((k) => !(k in value));
    if (missing.length > 0) {
      throw new InternalServerError(
        `Multipart ${what} is missing field(s) ${missing.join(', ')}; expected ${Object.keys(this.fields).join(', ')}`,
      );
    }
    return Object.entries(this.fields as MultipartFields);
  }

  // --- gRPC (docs/spec/io-descriptors.md §11.3) ---

  override async fromProto(
    message: ProtoPayload | Uint8Array,
    limits?: Readonly<Limits>,
  ): Promise<MultipartInput<F>> {
    if (message instanceof Uint8Array)
      throw new InvalidArgument("cannot use 'serialized_bytes' with Multipart");
    const fields = (message as MultipartMessage).fields ?? {};
    this.checkKeys(Object.keys(fields), 'MultipartMessage');
    const entries = Object.entries(this.fields as MultipartFields);
    // Each part in an async function: a part that throws at once (an empty field) must not leave the parts
    // already started as unhandled rejections.
    const results = await Promise.allSettled(
      entries.map(async ([name, child]) => {
        const part = fields[name] ?? {};
        const member = setMember(part, child);
        return child.fromProto(
          member === 'serialized_bytes'
            ? part.serialized_bytes!
            : part[member as Exclude<ProtoField, 'multipart'>]!,
          limits,
        );
      }),
    );
    return collect(entries, results) as MultipartInput<F>;
  }

  override async toProto(result: MultipartOutput<F>, limits?: Readonly<Limits>): Promise<MultipartMessage> {
    const value = result as MultipartValue;
    this.checkKeys(Object.keys(value ?? {}), typeName(value));
    const entries = this.checkedEntries(value, 'output');
    const settled = await Promise.allSettled(
      entries.map(async ([name, child]) => child.toProto(value[name], limits)),
    );
    const payloads = collect(entries, settled);
    const out: Record<string, PartMessage> = {};
    for (const [name, child] of entries) {
      const member = child.protoFields[0]!;
      out[name] = { [member]: payloads[name], representation: member } as PartMessage;
    }
    return { fields: out };
  }

  private checkKeys(keys: string[], given: string): void {
    const extra = keys.filter((k) => !(k in this.fields));
    if (extra.length > 0) {
      throw new InvalidArgument(
        `'${this.displayName}' accepts the following keys: ${Object.keys(this.fields).join(', ')}. Given ${given} has invalid fields: ${extra.join(', ')}`,
      );
    }
  }

  // --- OpenAPI (docs/spec/io-descriptors.md §9.4, D13) ---

  override openapiSchema(): SchemaObject {
    const properties: Record<string, SchemaObject> = {};
    for (const [name, child] of Object.entries(this.fields)) properties[name] = child.openapiSchema();
    return { type: 'object', properties };
  }

  override openapiComponents(): ComponentsObject {
    const schemas: Record<string, SchemaObject> = {};
    for (const child of Object.values(this.fields))
      Object.assign(schemas, child.openapiComponents()?.schemas);
    return Object.keys(schemas).length > 0 ? { schemas } : {};
  }

  override openapiExample(): unknown {
    const example: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(this.fields)) example[name] = child.openapiExample() ?? null;
    return example;
  }

  /**
   * Each part's request example; a part with an example file (an image) is left to it. None when a part has
   * neither (a file: no JSON value can stand for its bytes).
   */
  override openapiRequestExample(): unknown {
    const files = this.exampleFiles();
    const example: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(this.fields)) {
      if (files[name]) continue;
      const part = child.openapiRequestExample();
      if (part === null || part === undefined) return null;
      example[name] = part;
    }
    return example;
  }

  /** The parts' example files, by part name. */
  override exampleFiles(): ExampleFiles {
    const files: Record<string, ExampleFile> = {};
    for (const [name, child] of Object.entries(this.fields)) {
      const file = child.exampleFiles()[''];
      if (file) files[name] = file;
    }
    return files;
  }

  override toSpec(): DescriptorSpec {
    const args: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(this.fields)) args[name] = child.toSpec();
    return { id: Multipart.descriptorId, args };
  }

  static override fromSpec(spec: DescriptorSpec): Multipart {
    const args = requireArgs(spec, 'Multipart');
    const fields: MultipartFields = {};
    for (const [name, childSpec] of Object.entries(args))
      fields[name] = descriptorFromSpec(childSpec as DescriptorSpec);
    return new Multipart(fields);
  }
}

/**
 * The request a child sees for one part (docs/spec/io-descriptors.md §9.2 step 3): a file part's own headers (its Content-Type)
 * over the outer ones and its bytes as body; a plain field keeps the outer headers, body = its text.
 * Either way, asking for the form gives a one-entry form.
 */
function subRequest(outer: HttpRequest, part: FormPart): HttpRequest {
  const headers = new Headers(outer.headers);
  if (part.isFile) for (const [name, value] of part.headers) headers.set(name, value);
  const init = { headers, body: part.data, form: [part] };
  if (outer instanceof BufferedHttpRequest) return outer.derive(init);
  return new BufferedHttpRequest({
    method: outer.method,
    url: outer.url,
    signal: () => outer.signal,
    limits: outer.limits,
    ...init,
  });
}

/** Gather settled child results; the first failure in declaration order is thrown as the child threw it. */
function collect<T>(
  entries: Array<[string, unknown]>,
  results: PromiseSettledResult<T>[],
): Record<string, T> {
  const out: Record<string, T> = {};
  for (let i = 0; i < entries.length; i++) {
    const r = results[i]!;
    if (r.status === 'rejected') throw r.reason;
    out[entries[i]![0]] = r.value;
  }
  return out;
}

/** The oneof member a Part sets, which must be one the child reads (docs/spec/io-descriptors.md §11.2 rule 2). */
function setMember(part: PartMessage, child: IODescriptor): ProtoField | 'serialized_bytes' {
  const members: Array<ProtoField | 'serialized_bytes'> = [
    'ndarray',
    'dataframe',
    'series',
    'file',
    'text',
    'json',
    'serialized_bytes',
  ];
  const member = part.representation ?? members.find((m) => part[m as keyof PartMessage] !== undefined);
  if (!member) throw new InvalidArgument('"field" cannot be empty.');
  if (member !== 'serialized_bytes' && !child.protoFields.includes(member)) {
    throw new InvalidArgument(
      `'${child.displayName}' accepts one of the following fields: '${child.protoFields.join(',')},serialized_bytes' got '${member}' instead.`,
    );
  }
  return member;
}

/** The `filename` parameter of a Content-Disposition value. */
function filenameOf(disposition: string): string | undefined {
  const params = parseMediaType(`x/y; ${disposition.split(';').slice(1).join(';')}`)?.parameters;
  return params?.filename;
}

registerDescriptor(Multipart);
