import { Readable } from 'node:stream';
import type { GeneratedImages } from '../../images-output.js';
import { resizeLanczos } from '../../lanczos-resize.js';
import { encodeGenerated, type OutputFormat } from '../../output-format.js';
import type { JobImage } from '../../worker-protocol.js';
import { invalidRequest, openAIErrorObject } from './openai-error.js';

/** `stream` and `partial_images` of an images request (a JSON body's values, or a form's strings). */
export interface StreamRequest {
  stream: boolean;
  /** Partial images to send before the final one, 0–3 (OpenAI's bound). */
  partialImages: number;
}

/** The streaming fields of a request; a 400 naming the parameter for a value OpenAI would refuse. */
export function streamRequest(fields: Record<string, unknown>): StreamRequest {
  const { stream, partial_images: partial } = fields;
  let on = false;
  if (stream === true || stream === 'true') on = true;
  else if (stream !== undefined && stream !== null && stream !== false && stream !== 'false' && stream !== '')
    throw invalidRequest('stream must be true or false', { code: 'INVALID_VALUE', param: 'stream' });
  let partialImages = 0;
  if (partial !== undefined && partial !== null && partial !== '') {
    const n = typeof partial === 'string' ? Number(partial) : partial;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 3)
      throw invalidRequest('partial_images must be an integer from 0 to 3', {
        code: 'INVALID_VALUE',
        param: 'partial_images',
      });
    partialImages = n;
  }
  return { stream: on, partialImages };
}

/** What one streamed generation is: its route (the events' prefix), output and how to run it. */
export interface ImageStreamOptions {
  route: 'generations' | 'edits';
  partialImages: number;
  format: OutputFormat;
  /** The answer's size where it is known before the run (partial images are scaled to it), else the preview's. */
  size: { width: number; height: number } | undefined;
  /** Starts the generation; `onPreview` gets each step's preview (when there is one) with the step counts. */
  run(onPreview: (step: number, totalSteps: number, preview: JobImage) => void): Promise<GeneratedImages>;
}

/** OpenAI's fields of every image event that Tiffin has no counterpart of. */
const FIXED = { background: 'opaque', quality: 'auto' } as const;
const NO_USAGE = {
  input_tokens: 0,
  input_tokens_details: { image_tokens: 0, text_tokens: 0 },
  output_tokens: 0,
  total_tokens: 0,
};

function event(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

/** The step at which partial image `k` of `n` is sent: evenly spaced over the run, never the last step. */
function partialStep(k: number, n: number, totalSteps: number): number {
  return Math.max(1, Math.floor(((k + 1) * totalSteps) / (n + 1)));
}

/**
 * An OpenAI images stream (`stream: true`) as server-sent events, as the `openai` SDK reads them:
 * `image_generation.partial_image` (`image_edit.partial_image` on edits) with `b64_json` and `partial_image_index`,
 * up to `partial_images` of them while the model denoises (the step previews: the tiny decoder's when the service
 * has one, else the latent approximation, scaled to the answer's size), then one `…completed` per image. A failure
 * after the stream opened is an `error` event (OpenAI's error body), which the SDK throws as its `APIError`.
 */
export function imageEventStream(options: ImageStreamOptions): Readable {
  const prefix = options.route === 'generations' ? 'image_generation' : 'image_edit';
  const { format, partialImages } = options;
  async function* events(): AsyncGenerator<string> {
    const pending: Array<Promise<string>> = [];
    let sent = 0;
    let wake: (() => void) | undefined;
    const created = () => Math.floor(Date.now() / 1000);
    const onPreview = (step: number, totalSteps: number, preview: JobImage) => {
      if (sent >= partialImages || step >= totalSteps || step < partialStep(sent, partialImages, totalSteps))
        return;
      const index = sent++;
      pending.push(
        partial(preview).then((b64) =>
          event(`${prefix}.partial_image`, {
            b64_json: b64,
            created_at: created(),
            size: sizeOf(options.size ?? preview),
            output_format: format,
            partial_image_index: index,
            ...FIXED,
          }),
        ),
      );
      wake?.();
    };
    const partial = async (preview: JobImage) => {
      const target = options.size ?? preview;
      const scaled =
        preview.width === target.width && preview.height === target.height
          ? preview
          : resizeLanczos(preview, target.width, target.height);
      return (await encodeGenerated(scaled.data, scaled.width, scaled.height, format)).toString('base64');
    };
    let finished = false;
    const result = options.run(onPreview).finally(() => {
      finished = true;
      wake?.();
    });
    result.catch(() => {});
    while (!finished || pending.length > 0) {
      const next = pending.shift();
      if (next) yield await next;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
    let images: GeneratedImages;
    try {
      images = await result;
    } catch (err) {
      yield event('error', { error: openAIErrorObject(err) });
      return;
    }
    for (const image of images.images) {
      const [height, width] = image.shape;
      const bytes = await encodeGenerated(image.data as Uint8Array, width, height, format);
      yield event(`${prefix}.completed`, {
        b64_json: bytes.toString('base64'),
        created_at: created(),
        size: sizeOf({ width, height }),
        output_format: format,
        usage: NO_USAGE,
        ...FIXED,
      });
    }
  }
  return Readable.from(events());
}

function sizeOf({ width, height }: { width: number; height: number }): string {
  return `${width}x${height}`;
}
