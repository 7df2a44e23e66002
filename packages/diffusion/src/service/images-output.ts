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
import {
  type DescriptorSpec,
  type FileMessage,
  type ResponseObject,
  readResponseBody,
} from '@tiffin/core/internal';
import { Image } from '@tiffin/io-image';

/** What a generation API returns: its images (HWC uint8 RGB) and each image's seed. */
export interface GeneratedImages {
  images: NDArray[];
  seeds: number[];
}

/** The media type of a response with several images. */
export const MULTI_IMAGE_MEDIA_TYPE = 'multipart/mixed';

/**
 * The output of `/text2img` and `/img2img`: one image is a JPEG (as BentoML's `Image()` answers, with its
 * seed in `x-seed`); several are one `multipart/mixed` response with a JPEG part per image, each part with
 * its own `x-seed` header, in order.
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
    if (value.images.length === 1) {
      ctx?.response.headers.set('x-seed', String(value.seeds[0]));
      return this.jpeg.toHttpResponse(value.images[0], ctx);
    }
    const boundary = randomBytes(16).toString('hex');
    const chunks: Buffer[] = [];
    for (let k = 0; k < value.images.length; k++) {
      const part = await this.jpeg.toHttpResponse(value.images[k], null);
      const head =
        `--${boundary}\r\ncontent-type: ${this.jpeg.mimeType}\r\n` +
        `content-disposition: inline; filename="image-${k}.jpg"\r\nx-seed: ${value.seeds[k]}\r\n\r\n`;
      chunks.push(Buffer.from(head, 'utf8'), await readResponseBody(part), Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from(`--${boundary}--\r\n`));
    // The handler's status, headers and cookies are applied by the runtime.
    return buildResponse({
      body: Buffer.concat(chunks),
      mediaType: `${MULTI_IMAGE_MEDIA_TYPE}; boundary=${boundary}`,
    });
  }

  /** gRPC carries one file: the first image only when one was asked for, else a clear refusal. */
  override async toProto(value: GeneratedImages): Promise<FileMessage> {
    if (value.images.length !== 1)
      throw new BadInput('several images per request are available over HTTP only (multipart/mixed)');
    return this.jpeg.toProto(value.images[0]);
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
    return {
      ...responses,
      description: `One image: ${this.mimeType}. Several (num_images_per_prompt > 1): ${MULTI_IMAGE_MEDIA_TYPE}, a JPEG part per image with its x-seed header.`,
      content: {
        ...responses.content,
        [MULTI_IMAGE_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } },
      },
    };
  }

  /** Described as the one-image wire format (what a client of an unchanged request receives). */
  override toSpec(): DescriptorSpec {
    return this.jpeg.toSpec();
  }
}
