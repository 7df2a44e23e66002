import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { Readable } from 'node:stream';
import type { Context } from '../../context/context.js';
import { BadInput, InternalServerError, InvalidArgument, truncateForMessage } from '../../errors/index.js';
import { parseMediaType } from '../../http/media-type.js';
import type { HttpRequest } from '../../http/request.js';
import { buildResponse, type HttpResponse } from '../../http/response.js';
import type { FileMessage, ProtoField, ProtoPayload } from '../../wire/proto/messages.js';
import { IODescriptor, registerDescriptor } from '../descriptor.js';
import type { ExampleFiles } from '../example-file.js';
import type { DescriptorSpec, SchemaObject } from '../openapi.js';
import type { WireForm } from '../wire-form.js';
import type { BinarySource, WireTypes } from '../wire-types.js';
import { requireArgs, typeName } from './common.js';

export interface FileOptions {
  /** Only `binaryio` exists (docs/spec/io-descriptors.md §8.1). */
  kind?: 'binaryio';
  /** Accepted input type and output Content-Type; null accepts any input and sends application/octet-stream. */
  mime_type?: string | null;
}

/** What a File input gives the API function. */
export interface FileInput {
  readonly bytes: Buffer;
  /** The multipart part's file name, or `<request body>` for a raw body. */
  readonly filename: string | undefined;
  /** The Content-Type the file came with (the part's, or the request's), or null. */
  readonly contentType: string | null;
}

/** What an API function may return to a File output. */
export type FileOutput =
  | Buffer
  | Uint8Array
  | Readable
  | AsyncIterable<Uint8Array | string>
  | Blob
  | FileInput;

const DEFAULT_KIND = 'application/octet-stream';

/**
 * Raw bytes (docs/spec/io-descriptors.md §8): the request body, or the first file part of a multipart form whose type
 * matches `mime_type`. A missing or mismatched Content-Type is a 400 (docs/spec/io-descriptors.md D1). Output is sent with
 * `mime_type` (or application/octet-stream), also when the handler uses ctx (docs/spec/io-descriptors.md D11).
 */
export class File extends IODescriptor<FileInput, FileOutput> {
  static override readonly descriptorId = 'tiffin.io.File';
  /** Clients send bytes, a Blob or a file path, and get a Blob (with the response's type) back. */
  declare readonly '~wire'?: WireTypes<BinarySource, Blob>;
  readonly protoFields: readonly ProtoField[] = ['file'];
  readonly kind: 'binaryio';
  readonly mime_type: string | null;

  constructor(options: FileOptions = {}) {
    super();
    const kind = options.kind ?? 'binaryio';
    if (kind !== 'binaryio') throw new InvalidArgument(`invalid File kind '${String(kind)}'`);
    this.kind = kind;
    this.mime_type = options.mime_type ?? null;
  }

  get mimeType(): string | null {
    return this.mime_type;
  }

  /**
   * docs/spec/io-descriptors.md §8.4: a path string → its contents, with `mime_type` guessed from the extension when not given
   * (a missing file throws ENOENT); bytes, Blobs and streams are kept as the sample.
   */
  static fromSample(sample: string | Uint8Array | Blob | Readable, options: FileOptions = {}): File {
    let guessed: string | null = null;
    let stored: unknown = sample;
    if (typeof sample === 'string') {
      stored = readFileSync(sample);
      guessed = EXTENSION_TYPES[extname(sample).toLowerCase()] ?? null;
    }
    const descriptor = new File({ ...options, mime_type: options.mime_type ?? guessed });
    descriptor.sample = stored;
    return descriptor;
  }

  async fromHttpRequest(request: HttpRequest): Promise<FileInput> {
    const header = request.headers.get('content-type');
    const mt = request.contentType;
    if (!header || !mt) {
      throw new BadInput(
        header
          ? `File input has a malformed Content-Type header: '${truncateForMessage(header)}'`
          : 'File input requires a Content-Type header (the file type, or multipart/form-data)',
      );
    }
    if (mt.essence === 'multipart/form-data') {
      const parts = (await request.formData()).filter((p) => p.isFile);
      if (parts.length === 0) throw new BadInput('no File found in multipart form');
      const match = parts.find((p) => this.accepts(p.headers.get('content-type')));
      if (!match) {
        const got = truncateForMessage(
          parts.map((p) => p.headers.get('content-type') ?? '(none)').join(', '),
        );
        throw new BadInput(
          `The File IO descriptor requires input to be of Content-Type '${this.mime_type}', got files with content types ${got}`,
        );
      }
      return { bytes: match.data, filename: match.filename, contentType: match.headers.get('content-type') };
    }
    if (!this.accepts(header)) {
      throw new BadInput(
        `File should have Content-Type '${this.mime_type}' or 'multipart/form-data', got ${truncateForMessage(header)} instead`,
      );
    }
    return { bytes: await request.body(), filename: '<request body>', contentType: header };
  }

  /** docs/spec/io-descriptors.md D2: media types compare by essence, case-insensitively. */
  private accepts(contentType: string | null): boolean {
    if (this.mime_type === null) return true;
    const mt = parseMediaType(contentType);
    return mt !== null && mt.essence === parseMediaType(this.mime_type)?.essence;
  }

  async toHttpResponse(value: FileOutput, _ctx: Context | null): Promise<HttpResponse> {
    const bytes = await fileBytes(value);
    // An explicit header, so text/* types get no charset added (docs/spec/io-descriptors.md §8.3).
    return buildResponse({ body: bytes, headers: [['content-type', this.mime_type ?? DEFAULT_KIND]] });
  }

  /** Bytes whatever the media type (a text/csv File is a file, not a string), sent as `mime_type`. */
  override clientWire(): WireForm {
    return this.mime_type ? { form: 'bytes', mediaType: this.mime_type } : { form: 'bytes' };
  }

  // --- gRPC (docs/spec/io-descriptors.md §11.3, D14) ---

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<FileInput> {
    if (message instanceof Uint8Array) {
      return { bytes: Buffer.from(message), filename: undefined, contentType: this.mime_type };
    }
    const msg = message as FileMessage;
    // docs/spec/io-descriptors.md D14: an unset kind is accepted; a set kind must match mime_type.
    if (this.mime_type !== null && msg.kind && !this.accepts(msg.kind)) {
      throw new BadInput(
        `MIME type from 'kind' is '${msg.kind}', while 'File' is expecting '${this.mime_type}'`,
      );
    }
    if (!msg.content || msg.content.byteLength === 0) throw new BadInput('Content is empty!');
    return { bytes: Buffer.from(msg.content), filename: undefined, contentType: msg.kind ?? this.mime_type };
  }

  override async toProto(value: FileOutput): Promise<FileMessage> {
    return { kind: this.mime_type ?? DEFAULT_KIND, content: await fileBytes(value) };
  }

  // --- OpenAPI (docs/spec/io-descriptors.md §8.4, D13) ---

  /**
   * The API's example (or the `fromSample` sample) as a file, when it is text or bytes: a file input shows a
   * file chooser, which no JSON example can fill, so the API page pre-fills it with this file.
   */
  override exampleFiles(example?: unknown): ExampleFiles {
    const value = example ?? this.sample;
    let bytes: Uint8Array;
    if (typeof value === 'string') bytes = Buffer.from(value, 'utf8');
    else if (value instanceof Uint8Array) bytes = value;
    else return {};
    const mediaType = this.mime_type ?? DEFAULT_KIND;
    const extension = Object.entries(EXTENSION_TYPES).find(([, type]) => type === mediaType)?.[0] ?? '';
    return { '': { mediaType, fileName: `example${extension}`, bytes: async () => bytes } };
  }

  override openapiSchema(): SchemaObject {
    return { type: 'string', format: 'binary' };
  }

  override toSpec(): DescriptorSpec {
    return { id: File.descriptorId, args: { kind: this.kind, mime_type: this.mime_type } };
  }

  static override fromSpec(spec: DescriptorSpec): File {
    return new File(requireArgs(spec, 'File') as FileOptions);
  }
}

/** Read a File result fully into one Buffer. */
async function fileBytes(value: FileOutput): Promise<Buffer> {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value && typeof value === 'object' && 'bytes' in value && value.bytes instanceof Uint8Array) {
    return Buffer.from(value.bytes);
  }
  if (
    value instanceof Blob ||
    value instanceof Readable ||
    (value && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
  ) {
    return readAll(value as Blob | AsyncIterable<Uint8Array | string>);
  }
  throw new InternalServerError(
    `File output expects bytes (Buffer/Uint8Array), a Blob or a readable stream, got ${typeName(value)}`,
  );
}

async function readAll(source: Uint8Array | Blob | AsyncIterable<Uint8Array | string>): Promise<Buffer> {
  if (source instanceof Uint8Array) return Buffer.from(source);
  if (source instanceof Blob) return Buffer.from(await source.arrayBuffer());
  const chunks: Buffer[] = [];
  for await (const chunk of source) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** Common extensions → MIME types, for File.fromSample on a path. */
const EXTENSION_TYPES: Record<string, string> = {
  '.bin': 'application/octet-stream',
  '.pdf': 'application/pdf',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.webp': 'image/webp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.svg': 'image/svg+xml',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/x-wav',
  '.mp4': 'video/mp4',
  '.parquet': 'application/vnd.apache.parquet',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};

registerDescriptor(File);
