import * as tf from '@tensorflow/tfjs';
import { timeIdsEmbedding, timestepEmbedding } from '../../architectures/timestep-embedding.js';
import { type ControlResiduals, unetStageDefinitions } from '../../architectures/unet.js';
import type { UNetConfig } from '../../architectures/unet-config.js';
import type { TextTimeInputs } from '../tensor-forms.js';
import { TfjsOps, type Weights } from './tfjs-ops.js';

/** Tensors handed from one UNet stage to the next (NHWC). */
export interface UNetActivations {
  /** Hidden state NHWC; the input sample before the first stage. */
  readonly h: tf.Tensor;
  /** Down-path outputs still waiting for their up block (last = next one consumed). */
  readonly skips: readonly tf.Tensor[];
  /** silu(time embedding) [1, 4·C0]; null before the first stage. */
  readonly tembAct: tf.Tensor | null;
}

/** One stage of the UNet (`architectures/unet.ts`) run eagerly on TF.js with the weights it is given. */
export interface UNetStage {
  /** `conv_in+time_embedding`, `down_blocks.<i>`, `mid_block`, `up_blocks.<i>`, `conv_norm_out+conv_out`. */
  readonly name: string;
  /** Weight-name prefixes (each ending in `.`) of the weights this stage reads. */
  readonly prefixes: readonly string[];
  /**
   * Returns the next activations. Tensors it creates are tidied except those returned; inputs
   * are never disposed (the caller owns them, including skips it pops).
   */
  run(
    w: Weights,
    a: UNetActivations,
    timestep: number,
    context: tf.Tensor,
    textTime?: TextTimeInputs,
    control?: ControlResiduals<tf.Tensor>,
  ): UNetActivations;
}

/** The UNet's stages on TF.js, in execution order. */
export function unetStages(c: UNetConfig): UNetStage[] {
  const C0 = c.block_out_channels[0];
  const Dt = c.addition_time_embed_dim ?? 0;
  const flip = c.flip_sin_to_cos ?? true;
  const shift = c.freq_shift ?? 0;
  return unetStageDefinitions(c).map((stage) => ({
    name: stage.name,
    prefixes: stage.prefixes,
    run: (w, a, timestep, context, textTime, control) => {
      const [h, tembAct, ...skips] = tf.tidy(() => {
        const timeProj = () => tf.tensor2d(timestepEmbedding(timestep, C0, flip, shift), [1, C0]);
        const added = textTime
          ? () => ({
              textEmbeds: textTime.textEmbeds,
              timeIds: tf.tensor2d(timeIdsEmbedding(textTime.timeIds, Dt, flip, shift), [
                textTime.timeIds.length,
                textTime.timeIds[0].length * Dt,
              ]),
            })
          : undefined;
        const next = stage.run(new TfjsOps(w), a, {
          timeProj,
          context,
          textTime: added,
          controlResiduals: control && (() => control),
        });
        return [next.h, next.tembAct as tf.Tensor, ...next.skips];
      });
      return { h, tembAct, skips };
    },
  }));
}
