import type { GeneratedImages } from '../images-output.js';
import type { JobImage } from '../worker-protocol.js';

/** An uploaded image decoded to 8-bit pixels, as the kinds read it (RGB, or grey/RGBA for a mask). */
export interface UploadedImage {
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/** Who follows a generation step by step (with a preview image per step when `preview`). */
export interface GenerationWatch {
  preview: boolean;
  onStep(step: number, totalSteps: number, preview: JobImage | undefined): void;
}

/** A LoRA file requests may name, as the service lists it. */
export interface LoraFile {
  name: string;
  bytes: number;
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
  /** The model folder's name. */
  readonly modelName: string;
  /** The values left-out scheduler, steps and guidance take. */
  readonly defaults: { scheduler: string | null; num_inference_steps: number; guidance_scale: number };
  /** The LoRA files requests may name. */
  listLoras(): Promise<LoraFile[]>;
  text2img(
    body: Record<string, unknown>,
    signal: AbortSignal,
    watch?: GenerationWatch,
  ): Promise<GeneratedImages>;
  img2img(
    body: Record<string, unknown>,
    image: UploadedImage,
    signal: AbortSignal,
    watch?: GenerationWatch,
  ): Promise<GeneratedImages>;
  inpaint(
    body: Record<string, unknown>,
    image: UploadedImage,
    mask: UploadedImage,
    signal: AbortSignal,
    watch?: GenerationWatch,
  ): Promise<GeneratedImages>;
}
