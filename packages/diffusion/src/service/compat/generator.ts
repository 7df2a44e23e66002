import type { GeneratedImages } from '../images-output.js';

/** An uploaded image decoded to 8-bit pixels, as the kinds read it (RGB, or grey/RGBA for a mask). */
export interface UploadedImage {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/**
 * How a compatible API (OpenAI Images, AUTOMATIC1111) generates: through the service's own kinds and queue, with
 * a body in the kind's own field names (validated by the kind's schema, so bounds and defaults are the same).
 */
export interface CompatGenerator {
  /** The kinds this service serves (`text2img`, `img2img`, `inpaint`). */
  readonly kinds: readonly string[];
  /** The largest side a request may ask for. */
  readonly maxSize: number;
  /** The model's own output side. */
  readonly defaultSize: number;
  /** Most images per request. */
  readonly maxImages: number;
  text2img(body: Record<string, unknown>, signal: AbortSignal): Promise<GeneratedImages>;
  img2img(body: Record<string, unknown>, image: UploadedImage, signal: AbortSignal): Promise<GeneratedImages>;
  inpaint(
    body: Record<string, unknown>,
    image: UploadedImage,
    mask: UploadedImage,
    signal: AbortSignal,
  ): Promise<GeneratedImages>;
}
