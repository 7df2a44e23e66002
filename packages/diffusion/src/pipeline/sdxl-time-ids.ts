import type { PipelineKind } from './parameters.js';

type Pair = readonly [number, number];

/** The micro-conditioning fields of a request (null or absent: not given). */
export interface SdxlMicroConditioning {
  original_size?: Pair | null;
  crops_coords_top_left?: Pair | null;
  target_size?: Pair | null;
  negative_original_size?: Pair | null;
  negative_crops_coords_top_left?: Pair | null;
  negative_target_size?: Pair | null;
}

/** The six micro-conditioning numbers of one UNet row: original (h, w), crop (top, left), target (h, w). */
export type SdxlTimeIdsRow = [number, number, number, number, number, number];

/** The positive and the negative (classifier-free guidance) rows. */
export interface SdxlTimeIds {
  positive: SdxlTimeIdsRow;
  negative: SdxlTimeIdsRow;
}

/**
 * SDXL's add_time_ids as diffusers 0.27 builds them (`_get_add_time_ids`), for a request of output `height` ×
 * `width`: original and target size default to it, the crop to (0, 0).
 * - text2img (`StableDiffusionXLPipeline`): the negative row is the positive one unless both
 *   `negative_original_size` and `negative_target_size` are given (then with `negative_crops_coords_top_left`,
 *   default (0, 0));
 * - img2img (`StableDiffusionXLImg2ImgPipeline`, no aesthetic score): `negative_original_size` and
 *   `negative_target_size` default to the positive ones, and the negative row takes the positive crop.
 * The request schema refuses the combinations diffusers would ignore (`sdxlRules` in parameters.ts).
 */
export function sdxlTimeIds(
  params: SdxlMicroConditioning & { height: number; width: number },
  kind: PipelineKind,
): SdxlTimeIds {
  const requested: Pair = [params.height, params.width];
  const original = params.original_size ?? requested;
  const crop = params.crops_coords_top_left ?? [0, 0];
  const target = params.target_size ?? requested;
  const positive: SdxlTimeIdsRow = [...original, ...crop, ...target];
  const negativeOriginal = params.negative_original_size;
  const negativeTarget = params.negative_target_size;
  if (kind === 'img2img')
    return {
      positive,
      negative: [...(negativeOriginal ?? original), ...crop, ...(negativeTarget ?? target)],
    };
  if (!negativeOriginal || !negativeTarget) return { positive, negative: positive };
  const negativeCrop = params.negative_crops_coords_top_left ?? [0, 0];
  return { positive, negative: [...negativeOriginal, ...negativeCrop, ...negativeTarget] };
}
