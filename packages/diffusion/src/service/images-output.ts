import { randomBytes } from 'node:crypto';
import {
  BadInput,
  buildResponse,
  type Context,
  type HttpRequest,
  type HttpResponse,
  IODescriptor,
  type NDArray,
  type ProtoField,
  type SchemaObject,
} from '@tiffin/core';
import type { DescriptorSpec, FileMessage, ResponseObject } from '@tiffin/core/internal';
import { Image } from '@tiffin/io-image';
import {
  encodeGenerated,
  negotiateOutputFormat,
  OUTPUT_FORMATS,
  type OutputFormat,
  outputMediaType,
} from './output-format.js';

/** What a generation API returns: its images (HWC uint8 RGB) and each image's seed. */
export interface GeneratedImages {
  images: NDArray[];
  seeds: number[];
  /** The format the request asked for (`output_format`); else the `Accept` header decides, JPEG by default. */
  format?: OutputFormat | null;
  /** JPEG/WebP quality 1–100 (`output_quality`); sharp's default 80 when absent. */
  quality?: number | null;
  /** Each image's A1111 infotext, written in its PNG's `parameters` text chunk (`generationInfotext`). */
  infotexts?: string[];
}

/** The media type of a response with several images. */
export const MULTI_IMAGE_MEDIA_TYPE = 'multipart/mixed';

/**
 * The output of `/text2img` and `/img2img`: one image is a JPEG, PNG or WebP (the request's `output_format`, else
 * the best its `Accept` names, else JPEG as BentoML's `Image()` answers; a 406 for an `Accept` naming none of them),
 * with its seed in `x-seed`; several are one `multipart/mixed` response with a part per image in that format, each
 * part with its own `x-seed` header, in order.
 */
export class GeneratedImagesOutput extends IODescriptor<never, GeneratedImages> {
  private readonly jpeg = new Image({ mime_type: 'image/jpeg' });
  readonly protoFields: readonly ProtoField[] = ['file'];

  get mimeType(): string {
    return this.jpeg.mimeType;
  }

  fromHttpRequest(_request: HttpRequest): Promise<never> {
    return Promise.reject(new BadInput('generated images are an output only'));
  }

  async toHttpResponse(value: GeneratedImages, ctx: Context | null): Promise<HttpResponse> {
    const format = negotiateOutputFormat(ctx?.request.headers.get('accept'), value.format);
    const mediaType = outputMediaType(format);
    const encode = (k: number) =>
      encodeImage(value.images[k], format, value.quality ?? undefined, value.infotexts?.[k]);
    if (value.images.length === 1) {
      ctx?.response.headers.set('x-seed', String(value.seeds[0]));
      const disposition: [string, string] = [
        'content-disposition',
        `attachment; filename="output.${format}"`,
      ];
      return buildResponse({ body: await encode(0), headers: [disposition], mediaType });
    }
    const boundary = randomBytes(16).toString('hex');
    const chunks: Buffer[] = [];
    for (let k = 0; k < value.images.length; k++) {
      const head =
        `--${boundary}\r\ncontent-type: ${mediaType}\r\n` +
        `content-disposition: inline; filename="image-${k}.${format}"\r\nx-seed: ${value.seeds[k]}\r\n\r\n`;
      chunks.push(Buffer.from(head, 'utf8'), await encode(k), Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    // The handler's status, headers and cookies are applied by the runtime.
    return buildResponse({
      body: Buffer.concat(chunks),
      mediaType: `${MULTI_IMAGE_MEDIA_TYPE}; boundary=${boundary}`,
    });
  }

  /** gRPC carries one file (in the request's `output_format`): one image only, else a clear refusal. */
  override async toProto(value: GeneratedImages): Promise<FileMessage> {
    if (value.images.length !== 1)
      throw new BadInput('several images per request are available over HTTP only (multipart/mixed)');
    const format = value.format ?? negotiateOutputFormat(null, null);
    return {
      kind: outputMediaType(format),
      content: await encodeImage(value.images[0], format, value.quality ?? undefined, value.infotexts?.[0]),
    };
  }

  override openapiSchema(): SchemaObject {
    return this.jpeg.openapiSchema();
  }

  override openapiComponents(): null {
    return null;
  }

  override openapiExample(): null {
    return null;
  }

  override openapiResponses(): ResponseObject {
    const responses = this.jpeg.openapiResponses();
    const binary = { schema: { type: 'string', format: 'binary' } } as const;
    return {
      ...responses,
      description: `One image: ${OUTPUT_FORMATS.map(outputMediaType).join(', ')} (output_format, else Accept, else JPEG; 406 for an Accept naming none). Several (num_images_per_prompt > 1): ${MULTI_IMAGE_MEDIA_TYPE}, a part per image in that format with its x-seed header.`,
      content: {
        ...responses.content,
        ...Object.fromEntries(OUTPUT_FORMATS.map((f) => [outputMediaType(f), binary])),
        [MULTI_IMAGE_MEDIA_TYPE]: binary,
      },
    };
  }

  /** Described as the one-image wire format (what a client of an unchanged request receives). */
  override toSpec(): DescriptorSpec {
    return this.jpeg.toSpec();
  }
}

/** An HWC uint8 RGB image encoded as `format`, with its infotext where A1111 writes it (`encodeGenerated`). */
function encodeImage(
  image: NDArray,
  format: OutputFormat,
  quality: number | undefined,
  infotext: string | undefined,
): Promise<Buffer> {
  const [height, width] = image.shape;
  return encodeGenerated(image.data as Uint8Array, width, height, format, quality, infotext);
}
