import * as tf from '@tensorflow/tfjs';
import { type VaeConfig, vaeDecode, vaeEncode } from '../../architectures/vae.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import type { WeightStore } from '../../weights/store.js';
import type { VaeEngine } from '../engine-models.js';
import type { LatentDistribution } from '../tensor-forms.js';
import { onTfjs } from './host-boundary.js';
import { TfjsOps } from './tfjs-ops.js';

/** AutoencoderKL (`architectures/vae.ts`) run eagerly on TF.js, NHWC. */
export class AutoencoderKL implements VaeEngine {
  private readonly ops: TfjsOps;

  constructor(
    readonly config: VaeConfig,
    readonly weights: WeightStore,
  ) {
    this.ops = new TfjsOps((n) => this.weights.get(n));
  }

  get scaleFactor(): number {
    return 2 ** (this.config.block_out_channels.length - 1);
  }

  /** Raw decoder output (no scaling) for latents NHWC → image NHWC roughly in [-1, 1]. */
  decode(z: tf.Tensor4D): tf.Tensor4D {
    return tf.tidy(() => vaeDecode(this.ops, this.config, z) as tf.Tensor4D);
  }

  /** Image NHWC in [-1, 1] → latent distribution (mean, std). */
  encode(x: tf.Tensor4D): LatentDistribution {
    const [mean, std] = tf.tidy(() => {
      const d = vaeEncode(this.ops, this.config, x);
      return [d.mean as tf.Tensor4D, d.std as tf.Tensor4D];
    });
    return { mean, std };
  }

  async decodeOnHost(z: HostTensor): Promise<HostTensor> {
    return (await onTfjs([z], ([t]) => ({ image: this.decode(t as tf.Tensor4D) }))).image;
  }

  async encodeOnHost(x: HostTensor): Promise<{ mean: HostTensor; std: HostTensor }> {
    return onTfjs([x], ([t]) => ({ ...this.encode(t as tf.Tensor4D) }));
  }

  dispose(): void {
    this.weights.dispose();
  }
}
