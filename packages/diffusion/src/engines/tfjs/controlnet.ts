import * as tf from '@tensorflow/tfjs';
import { controlNetForward } from '../../architectures/controlnet.js';
import { type ControlNetConfig, controlNetTimeInputs } from '../../architectures/controlnet-config.js';
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
    const time = controlNetTimeInputs(c, timestep, textTime?.timeIds);
    const ids = time.timeIds;
    const out = await onTfjs([sample, context, image, textTime?.textEmbeds], ([s, ctx, img, embeds]) =>
      tf.tidy(() => {
        const o = new TfjsOps((name) => this.weights.get(name));
        const r = controlNetForward(o, c, s as tf.Tensor, img as tf.Tensor, {
          timeProj: () => tf.tensor2d(time.timeProj.data, time.timeProj.shape),
          context: ctx as tf.Tensor,
          textTime:
            embeds && ids
              ? () => ({ textEmbeds: embeds, timeIds: tf.tensor2d(ids.data, ids.shape) })
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
