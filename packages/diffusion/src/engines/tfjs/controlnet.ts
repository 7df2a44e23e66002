import * as tf from '@tensorflow/tfjs';
import { controlNetForward } from '../../architectures/controlnet.js';
import type { ControlNetConfig } from '../../architectures/controlnet-config.js';
import { TIME_IDS, timeIdsEmbedding, timestepEmbedding } from '../../architectures/timestep-embedding.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import type { WeightStore } from '../../weights/store.js';
import type { ControlNetEngine, HostControlResiduals, HostTextTime } from '../engine-models.js';
import { onTfjs } from './host-boundary.js';
import { TfjsOps } from './tfjs-ops.js';

/** diffusers' ControlNetModel (`architectures/controlnet.ts`) run eagerly on TF.js, NHWC. */
export class ControlNetModel implements ControlNetEngine {
  constructor(
    readonly config: ControlNetConfig,
    readonly weights: WeightStore,
  ) {}

  async residualsOnHost(
    sample: HostTensor,
    timestep: number,
    context: HostTensor,
    image: HostTensor,
    textTime?: HostTextTime,
  ): Promise<HostControlResiduals> {
    const c = this.config;
    const C0 = (c.block_out_channels ?? [320])[0];
    const flip = c.flip_sin_to_cos ?? true;
    const shift = c.freq_shift ?? 0;
    const Dt = c.addition_time_embed_dim ?? 0;
    const out = await onTfjs([sample, context, image, textTime?.textEmbeds], ([s, ctx, img, embeds]) =>
      tf.tidy(() => {
        const o = new TfjsOps((name) => this.weights.get(name));
        const r = controlNetForward(o, c, s as tf.Tensor, img as tf.Tensor, {
          timeProj: () => tf.tensor2d(timestepEmbedding(timestep, C0, flip, shift), [1, C0]),
          context: ctx as tf.Tensor,
          textTime:
            embeds && textTime
              ? () => ({
                  textEmbeds: embeds,
                  timeIds: tf.tensor2d(timeIdsEmbedding(textTime.timeIds, Dt, flip, shift), [
                    textTime.timeIds.length,
                    TIME_IDS * Dt,
                  ]),
                })
              : undefined,
        });
        return Object.fromEntries([...r.down.map((d, k) => [`d${k}`, d]), ['mid', r.mid]]) as Record<
          string,
          tf.Tensor
        >;
      }),
    );
    const down: HostTensor[] = [];
    for (let k = 0; out[`d${k}`]; k++) down.push(out[`d${k}`] as HostTensor);
    return { down, mid: out.mid as HostTensor };
  }

  dispose(): void {
    this.weights.dispose();
  }
}
