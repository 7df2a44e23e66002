import type * as tf from '@tensorflow/tfjs';

/**
 * What the models answer in TF.js tensors, on either engine: the TF.js classes natively, the ONNX ones by converting
 * their host arrays (`latents/tfjs-interop.ts`). The pipeline itself calls the host forms (`engine-models.ts`).
 */

export interface ClipTextOutput {
  /** [B, L, D] after the final LayerNorm. */
  lastHiddenState: tf.Tensor3D;
}

/** What SDXL takes from each of its two text encoders. */
export interface SdxlTextEncoding {
  /** `hidden_states[-2]` `[B, L, D]` (no final LayerNorm). */
  penultimate: tf.Tensor3D;
  /** The projected pooled output `[B, projection_dim]`; only from an encoder with `text_projection`. */
  textEmbeds?: tf.Tensor2D;
}

/** SDXL's added conditioning as the caller has it: pooled text embeds `[B, P]` and six time ids per row. */
export interface TextTimeInputs {
  textEmbeds: tf.Tensor;
  timeIds: readonly (readonly number[])[];
}

export interface LatentDistribution {
  /** NHWC [B, h, w, latent_channels]. */
  mean: tf.Tensor4D;
  std: tf.Tensor4D;
}
