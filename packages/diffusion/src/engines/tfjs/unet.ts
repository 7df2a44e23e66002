import * as tf from '@tensorflow/tfjs';
import type { ControlResiduals } from '../../architectures/unet.js';
import { type UNetConfig, validateUNetConfig } from '../../architectures/unet-config.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import type { LowRankBranchesByName } from '../../lora/types.js';
import type { WeightStore } from '../../weights/store.js';
import type { ComponentLora, HostControlResiduals, HostTextTime, UNetEngine } from '../engine-models.js';
import type { TextTimeInputs } from '../tensor-forms.js';
import { onTfjs } from './host-boundary.js';
import { branchesByTensor, withLowRankBranches } from './low-rank.js';
import { type UNetActivations, type UNetStage, unetStages } from './unet-stages.js';

/** UNet2DConditionModel (`architectures/unet.ts`) run eagerly on TF.js, NHWC. */
export class UNet2DConditionModel implements UNetEngine {
  private readonly stages: readonly UNetStage[];

  constructor(
    readonly config: UNetConfig,
    readonly weights: WeightStore,
  ) {
    validateUNetConfig(config, { textTime: true });
    this.stages = unetStages(config);
  }

  /**
   * sample NHWC [B, h, w, 4], timestep scalar, context [B, 77, Dc] → NHWC prediction.
   * `lora`: low-rank branches added at run time (unfused LoRA), keyed by weight name. `textTime`: SDXL's
   * pooled text embeds and time ids (required by a `text_time` UNet). `control`: ControlNet residuals (NHWC).
   */
  predict(
    sample: tf.Tensor4D,
    timestep: number,
    context: tf.Tensor3D,
    lora?: LowRankBranchesByName,
    textTime?: TextTimeInputs,
    control?: ControlResiduals<tf.Tensor>,
  ): tf.Tensor4D {
    const w = (name: string) => this.weights.get(name);
    return withLowRankBranches(branchesByTensor(lora, w), () =>
      this.forward(sample, timestep, context, textTime, control),
    );
  }

  /** {@link predict} on host arrays (the pipeline's call). */
  async predictOnHost(
    sample: HostTensor,
    timestep: number,
    context: HostTensor,
    lora?: ComponentLora,
    textTime?: HostTextTime,
    control?: HostControlResiduals,
  ): Promise<HostTensor> {
    const branches = lora?.runtime.component(lora.component);
    const residuals = control ? [...control.down, control.mid] : [];
    const out = await onTfjs(
      [sample, context, textTime?.textEmbeds, ...residuals],
      ([s, c, embeds, ...r]) => ({
        noise: this.predict(
          s as tf.Tensor4D,
          timestep,
          c as tf.Tensor3D,
          branches,
          embeds && textTime ? { textEmbeds: embeds, timeIds: textTime.timeIds } : undefined,
          control && { down: r.slice(0, -1) as tf.Tensor[], mid: r[r.length - 1] as tf.Tensor },
        ),
      }),
    );
    return out.noise;
  }

  private forward(
    sample: tf.Tensor4D,
    timestep: number,
    context: tf.Tensor3D,
    textTime: TextTimeInputs | undefined,
    control: ControlResiduals<tf.Tensor> | undefined,
  ): tf.Tensor4D {
    const w = (name: string) => this.weights.get(name);
    return tf.tidy(() => {
      let a: UNetActivations = { h: sample, skips: [], tembAct: null };
      for (const stage of this.stages) a = stage.run(w, a, timestep, context, textTime, control);
      return a.h as tf.Tensor4D;
    });
  }

  dispose(): void {
    this.weights.dispose();
  }
}
