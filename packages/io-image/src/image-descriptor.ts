import { readFile } from 'node:fs/promises';
import {
  BadInput,
  type Batching,
  buildResponse,
  type Context,
  type ExampleFiles,
  type HttpRequest,
  type HttpResponse,
  InvalidArgument,
  IODescriptor,
  NDArray,
  oneItemPerRequest,
  type ProtoField,
  type ProtoPayload,
  registerDescriptor,
  type SchemaObject,
  type WireForm,
  type WireTypes,
} from '@tiffin/core';
import {
  type BinarySource,
  type DescriptorSpec,
  type FileMessage,
  parseMediaType,
  type RequestBodyObject,
} from '@tiffin/core/descriptor';
import sharp, { type Sharp } from 'sharp';
import { type FileTypeImporter, sniffMimeType } from './codec/mime-detection.js';
import { decodeImage, ImageDecodeError } from './decode/decode-image.js';
import { DEFAULT_MAX_PIXELS } from './decode/limits.js';
import { encodeImage } from './encode/encode-image.js';
import { canonicalMimeType, type FormatInfo, formatForMimeType, SUPPORTED_MIME_TYPES } from './formats.js';
import { isAllowedMediaType, readImagePart } from './http/read-image-part.js';
import { isPilMode, PIL_MODES, type PilMode } from './modes.js';
import { exampleImageFile } from './openapi/example-image.js';
import { TiffinImage } from './tiffin-image.js';

/** Options of `new Image(...)` (docs/spec/io-descriptors.md §7.2; names as the spec spells them, D7). */
export interface ImageOptions {
  /** Mode of the pixels the API function receives and of pixel arrays it returns; null keeps the file's. Default 'RGB'. */
  pilmode?: PilMode | null;
  /** Output encoding. Default 'image/jpeg'. */
  mime_type?: string;
  /** Accepted upload types (client Content-Type and sniffed content); null = every supported type. `image/*` works. */
  allowed_mime_types?: readonly string[] | null;
  /**
   * Largest image (width × height) decoded; larger ones are refused from their header with 413. Tiffin's own
   * option, so camelCase beside the reference framework's snake_case ones.
   */
  maxPixels?: number;
  /** @deprecated Spelled `maxPixels`; still read (and written so in the descriptor's spec args). */
  max_pixels?: number;
}

/** What an API function may return for an Image output. */
export type ImageOutput = TiffinImage | NDArray | Sharp | Uint8Array;

const BINARY_SCHEMA: SchemaObject = { type: 'string', format: 'binary' };

/**
 * Image input/output on sharp. Input: a multipart/form-data file part or a raw body with an allowed image
 * Content-Type; the bytes are sniffed (file-type) and decoded in `pilmode`. Output: a TiffinImage, pixel
 * NDArray, sharp pipeline or encoded bytes, encoded as `mime_type` and sent as an attachment.
 */
export class Image extends IODescriptor<TiffinImage, ImageOutput> {
  static override readonly descriptorId = 'tiffin.io.Image';
  /** Clients send image bytes, a Blob or a file path, and get the encoded image as a Blob. */
  declare readonly '~wire'?: WireTypes<BinarySource, Blob>;
  readonly protoFields: readonly ProtoField[] = ['file'];
  readonly pilmode: PilMode | null;
  readonly allowedMimeTypes: readonly string[];
  readonly maxPixels: number;
  private outputFormat: FormatInfo;
  /** Replaceable loader of the file-type package (tests simulate it missing). */
  fileTypeImporter: FileTypeImporter | undefined;

  /** One image per request; the function gets the batch's images and returns one output image each. */
  override readonly batching: Batching<TiffinImage, ImageOutput, TiffinImage[], ImageOutput[]> =
    oneItemPerRequest('Image');

  constructor(options: ImageOptions = {}) {
    super();
    const mode = options.pilmode === undefined ? 'RGB' : options.pilmode;
    if (mode !== null && !isPilMode(mode)) {
      throw new InvalidArgument(
        `Invalid Image pilmode '${String(mode)}'. Supported PIL modes are ${PIL_MODES.join(', ')}.`,
      );
    }
    this.pilmode = mode;
    const mime = (options.mime_type ?? 'image/jpeg').toLowerCase();
    const format = formatForMimeType(mime);
    if (!format) {
      throw new InvalidArgument(
        `Invalid Image mime_type '${mime}'; supported mime types are ${SUPPORTED_MIME_TYPES.join(', ')} `,
      );
    }
    this.outputFormat = format;
    const allowed = options.allowed_mime_types ?? null;
    if (allowed !== null && (!Array.isArray(allowed) || allowed.some((m) => typeof m !== 'string'))) {
      throw new InvalidArgument('Image allowed_mime_types must be a list of MIME type strings or null');
    }
    this.allowedMimeTypes = allowed === null ? SUPPORTED_MIME_TYPES : allowed.map((m) => m.toLowerCase());
    const maxPixels = options.maxPixels ?? options.max_pixels ?? DEFAULT_MAX_PIXELS;
    if (!Number.isSafeInteger(maxPixels) || maxPixels <= 0) {
      throw new InvalidArgument(`Image maxPixels must be a positive integer, got ${String(maxPixels)}`);
    }
    this.maxPixels = maxPixels;
  }

  get mimeType(): string {
    return this.outputFormat.mimeType;
  }

  /** File name announced in content-disposition (`output.jpeg`, `output.bmp`, ...). */
  get outputFileName(): string {
    return `output.${this.outputFormat.extension}`;
  }

  async fromHttpRequest(request: HttpRequest): Promise<TiffinImage> {
    const bytes = await readImagePart(request, this.allowedMimeTypes);
    return this.decodeUpload(bytes, 'uploaded');
  }

  async toHttpResponse(value: ImageOutput, _ctx: Context | null): Promise<HttpResponse> {
    const body = await this.encodeOutput(value);
    // A content-disposition the handler sets on ctx.response wins over this one (applied by the runtime).
    const disposition: [string, string] = [
      'content-disposition',
      `attachment; filename="${this.outputFileName}"`,
    ];
    return buildResponse({ body, headers: [disposition], mediaType: this.mimeType });
  }

  /** Bytes; untyped bytes are sent as the image type their magic number names. */
  override clientWire(): WireForm {
    return { form: 'bytes', sniff: 'image' };
  }

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<TiffinImage> {
    if (message instanceof Uint8Array) return this.decodeUpload(message, 'uploaded');
    const file = message as FileMessage;
    if (file.kind) {
      const kind = parseMediaType(file.kind)?.essence ?? file.kind;
      if (canonicalMimeType(kind) !== this.mimeType) {
        throw new BadInput(
          `MIME type from 'kind' is '${file.kind}', while 'Image' is expecting '${this.mimeType}'`,
        );
      }
    }
    if (!file.content || file.content.length === 0) throw new BadInput('Content is empty!');
    return this.decodeUpload(file.content, 'uploaded');
  }

  override async toProto(value: ImageOutput): Promise<FileMessage> {
    return { kind: this.mimeType, content: await this.encodeOutput(value) };
  }

  override openapiSchema(): SchemaObject {
    return { ...BINARY_SCHEMA };
  }

  /** An example image the API page pre-fills and clients can post: the sample, else a small landscape. */
  override exampleFiles(): ExampleFiles {
    const file = exampleImageFile(
      this.allowedMimeTypes,
      this.maxPixels,
      this.sample as TiffinImage | undefined,
    );
    return file ? { '': file } : {};
  }

  override openapiRequestBody(): RequestBodyObject {
    const content: RequestBodyObject['content'] = {};
    for (const mime of this.allowedMimeTypes) content[mime] = { schema: this.openapiSchema() };
    return { content, required: true, 'x-tiffin-io-descriptor': this.toSpec() };
  }

  override toSpec(): DescriptorSpec {
    return {
      id: Image.descriptorId,
      args: {
        pilmode: this.pilmode,
        mime_type: this.mimeType,
        allowed_mime_types: [...this.allowedMimeTypes],
        max_pixels: this.maxPixels,
      },
    };
  }

  static override fromSpec(spec: DescriptorSpec): Image {
    if (!spec.args) throw new InvalidArgument(`Missing args key in Image spec: ${JSON.stringify(spec)}`);
    return new Image(spec.args as ImageOptions);
  }

  /**
   * An Image descriptor whose example is `sample` (a file path or the image bytes). The type is sniffed
   * from the content; `mime_type` becomes that type (output encoding included).
   */
  static async fromSample(
    sample: string | Uint8Array,
    options: ImageOptions = {},
    fileTypeImporter?: FileTypeImporter,
  ): Promise<Image> {
    let bytes: Uint8Array;
    let label: string;
    if (typeof sample === 'string') {
      label = sample;
      try {
        bytes = await readFile(sample);
      } catch (err) {
        throw new InvalidArgument(`Cannot read sample image file '${sample}': ${(err as Error).message}`);
      }
    } else if (sample instanceof Uint8Array) {
      label = `The given ${sample.length} bytes`;
      bytes = sample;
    } else {
      throw new InvalidArgument(
        `Image.fromSample expects a file path or the image bytes, got ${describeValue(sample)}`,
      );
    }
    const sniffed = await sniffMimeType(bytes, fileTypeImporter);
    const mime = sniffed ? canonicalMimeType(sniffed.mime) : undefined;
    if (!mime) throw new InvalidArgument(`${label} is not a valid image file type.`);
    const descriptor = new Image({ ...options, mime_type: mime });
    descriptor.fileTypeImporter = fileTypeImporter;
    try {
      descriptor.sample = await decodeImage(bytes, mime, {
        mode: descriptor.pilmode,
        maxPixels: descriptor.maxPixels,
      });
    } catch (err) {
      if (err instanceof ImageDecodeError)
        throw new BadInput(`Failed to parse sample image file: ${err.message}`);
      throw err;
    }
    return descriptor;
  }

  /** Sniff, check and decode uploaded bytes. */
  private async decodeUpload(bytes: Uint8Array, what: 'uploaded'): Promise<TiffinImage> {
    if (bytes.length === 0) throw new BadInput(`Failed to parse ${what} image file: the file is empty`);
    const sniffed = await sniffMimeType(bytes, this.fileTypeImporter);
    const mime = sniffed ? canonicalMimeType(sniffed.mime) : undefined;
    if (!mime) {
      throw new BadInput(
        `Failed to parse ${what} image file: its content is ${sniffed ? `${sniffed.mime}, not a supported image type` : 'not a recognised image format'}`,
      );
    }
    // The content decides, not the client's claim: a restricted descriptor refuses other content.
    if (!isAllowedMediaType(mime, this.allowedMimeTypes)) {
      throw new BadInput(
        `The ${what} image file is ${mime} (detected from its content), which is not allowed; allowed mime types are: ${this.allowedMimeTypes.join(', ')}`,
      );
    }
    try {
      return await decodeImage(bytes, mime, { mode: this.pilmode, maxPixels: this.maxPixels });
    } catch (err) {
      if (err instanceof ImageDecodeError)
        throw new BadInput(`Failed to parse ${what} image file: ${err.message}`);
      throw err;
    }
  }

  /** Encode what the API function returned (docs/spec/io-descriptors.md §7.4). */
  private async encodeOutput(value: ImageOutput): Promise<Buffer> {
    const format = this.outputFormat.format;
    if (value instanceof TiffinImage) return encodeImage(value, format);
    if (value instanceof NDArray) return encodeImage(TiffinImage.fromNDArray(value, this.pilmode), format);
    if (value instanceof sharp) return encodeImage(value, format);
    if (value instanceof Uint8Array) {
      const sniffed = await sniffMimeType(value, this.fileTypeImporter);
      const mime = sniffed ? canonicalMimeType(sniffed.mime) : undefined;
      if (!mime) {
        throw new BadInput(
          `Unsupported Image type received: bytes that are not a supported image (${sniffed?.mime ?? 'unrecognised content'})`,
        );
      }
      if (mime === this.mimeType) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      const image = await decodeImage(value, mime, { mode: null, maxPixels: this.maxPixels });
      return encodeImage(image, format);
    }
    throw new BadInput(
      `Unsupported Image type received: '${describeValue(value)}', the Image IO descriptor only supports TiffinImage, NDArray, sharp pipelines and encoded image bytes.`,
    );
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return (value as object).constructor?.name ?? 'object';
  return typeof value;
}

registerDescriptor(Image);
