import { ConfigError } from '@tiffin/core/internal';
import type { OnnxRuntimeOptions } from '@tiffin/onnx';

/**
 * How the ONNX engine stores model weights in its built graphs (`--weights`):
 * - `f32`: float32, as ORT's CPU provider computes (the default on CPU);
 * - `f16`: float16 storage, half the disk; on CPU each weight is widened to float32 when the session opens;
 * - `int8`: linear and convolution weights quantized to int8 per output channel (symmetric), run by ORT's
 *   integer kernels on CPU (a quarter of the memory, faster steps); other weights stay float32.
 * GPU execution providers (cuda, tensorrt, dml) keep their f16/f32 graphs whatever is asked.
 */
export type OnnxWeights = 'f32' | 'f16' | 'int8';

export const ONNX_WEIGHT_FORMATS: readonly OnnxWeights[] = ['f32', 'f16', 'int8'];

/** A `--weights` value (ConfigError naming the accepted ones otherwise). */
export function parseOnnxWeights(value: string, origin?: string): OnnxWeights {
  const v = value.trim().toLowerCase();
  if ((ONNX_WEIGHT_FORMATS as readonly string[]).includes(v)) return v as OnnxWeights;
  const detail = `unknown weight format ${JSON.stringify(value)}: expected ${ONNX_WEIGHT_FORMATS.join(', ')}`;
  throw new ConfigError(origin ? `${origin}: ${detail}` : detail);
}

/** The service's onnxruntime settings: threads and providers, and how the built graphs store weights. */
export interface DiffusionOnnxOptions extends OnnxRuntimeOptions {
  /** `--weights` (default f32): see {@link OnnxWeights}. */
  weights?: OnnxWeights;
}
