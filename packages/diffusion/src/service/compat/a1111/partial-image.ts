import { hiresJob } from '../../hires-request.js';
import { resizeLanczos } from '../../lanczos-resize.js';
import type { JobImage } from '../../worker-protocol.js';
import { fittedSize } from '../fitted-size.js';
import type { UploadedImage } from '../generator.js';
import type { A1111Plan } from './a1111-request.js';

/**
 * The image an interrupted A1111 generation answers, as A1111 answers the latents it got to: its latest step
 * preview (the tiny decoder's, or the latent approximation) scaled to the size the finished image would have had:
 * txt2img's `width`×`height` (a hires fix's final size), or img2img's upload as the kinds fit it.
 */
export function partialImage(
  preview: JobImage,
  plan: A1111Plan,
  upload: UploadedImage | undefined,
  maxSize: number,
): JobImage {
  const asked = { width: Number(plan.parameters.width), height: Number(plan.parameters.height) };
  const hires = plan.hires && hiresJob(plan.hires.body, asked.width, asked.height, maxSize);
  const { width, height } = upload ? fittedSize(upload.width, upload.height, maxSize) : (hires ?? asked);
  if (preview.width === width && preview.height === height) return preview;
  return resizeLanczos(preview, width, height);
}
