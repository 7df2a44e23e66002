import type { ClipTextConfig } from '../architectures/clip-text.js';
import type { ControlNetConfig } from '../architectures/controlnet-config.js';
import type { TinyAutoencoderConfig } from '../architectures/tiny-autoencoder.js';
import type { UNetConfig } from '../architectures/unet-config.js';
import type { VaeConfig } from '../architectures/vae.js';
import type { HostTensor } from '../latents/host-tensor.js';
import type { RuntimeLora } from '../lora/runtime.js';
import type { LoraComponent } from '../lora/types.js';

/**
 * The models as the pipeline calls them, on either engine: host float32 arrays (NHWC) in and out, so the latent
 * maths around them is engine-neutral. The TF.js engine converts to and from its tensors inside these calls;
 * onnxruntime feeds the arrays to its sessions as they are.
 */

/** A request's run-time LoRA for one component; each engine takes the branches in its own form. */
export interface ComponentLora {
  readonly runtime: RuntimeLora;
  readonly component: LoraComponent;
}

/** SDXL's added conditioning: pooled text embeds `[B, P]` and six time ids per row. */
export interface HostTextTime {
  textEmbeds: HostTensor;
  timeIds: readonly (readonly number[])[];
}

export interface TextEncoderEngine {
  readonly config: ClipTextConfig;
  /** Token ids [B][L] → last hidden state [B, L, D] (final_layer_norm(hidden_states[-(k+1)]) for clip skip k). */
  encodeOnHost(
    ids: readonly (readonly number[])[],
    clipSkip?: number,
    lora?: ComponentLora,
  ): Promise<HostTensor>;
  /** SDXL's outputs: the penultimate hidden state, and the projected pooled output when the weights project. */
  encodeForSdxlOnHost(
    ids: readonly (readonly number[])[],
    lora?: ComponentLora,
  ): Promise<{ penultimate: HostTensor; textEmbeds: HostTensor | undefined }>;
  dispose(): void;
}

/** ControlNet residuals for the UNet (NHWC, batched like its sample): one per down-path output, and the mid one. */
export interface HostControlResiduals {
  down: HostTensor[];
  mid: HostTensor;
}

export interface UNetEngine {
  readonly config: UNetConfig;
  /**
   * sample NHWC [B, h, w, C], timestep, context [B, 77, Dc] → NHWC noise prediction; `control`: ControlNet
   * residuals added to the down path's outputs and the mid block's (already scaled and summed).
   */
  predictOnHost(
    sample: HostTensor,
    timestep: number,
    context: HostTensor,
    lora?: ComponentLora,
    textTime?: HostTextTime,
    control?: HostControlResiduals,
  ): Promise<HostTensor>;
  dispose(): void;
}

/** A ControlNet (`architectures/controlnet.ts`) as the pipeline calls it. */
export interface ControlNetEngine {
  readonly config: ControlNetConfig;
  /**
   * sample NHWC [B, h, w, C], timestep, context [B, L, Dc], conditioning image NHWC [B, 8h, 8w, 3] in [0, 1] →
   * the unscaled residuals (NHWC).
   */
  residualsOnHost(
    sample: HostTensor,
    timestep: number,
    context: HostTensor,
    image: HostTensor,
    textTime?: HostTextTime,
  ): Promise<HostControlResiduals>;
  dispose(): void;
}

export interface VaeEngine {
  readonly config: VaeConfig;
  readonly scaleFactor: number;
  /** Raw decoder output for NHWC latents (already divided by scaling_factor). */
  decodeOnHost(z: HostTensor): Promise<HostTensor>;
  /** NHWC image in [-1, 1] → latent mean and std (NHWC). */
  encodeOnHost(x: HostTensor): Promise<{ mean: HostTensor; std: HostTensor }>;
  dispose(): void;
}

/** The tiny autoencoder's decoder (TAESD): the UNet's latents (divided by its scaling_factor, 1) → image. */
export interface TinyDecoderEngine {
  readonly config: TinyAutoencoderConfig;
  readonly scaleFactor: number;
  /** Raw decoder output (NHWC, roughly in [-1, 1]) for NHWC latents. */
  decodeOnHost(z: HostTensor): Promise<HostTensor>;
  dispose(): void;
}
