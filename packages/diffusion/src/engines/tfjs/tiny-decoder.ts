import * as tf from '@tensorflow/tfjs';
import {
  type TinyAutoencoderConfig,
  tinyDecode,
  tinyDecoderScaleFactor,
} from '../../architectures/tiny-autoencoder.js';
import type { HostTensor } from '../../latents/host-tensor.js';
import type { WeightStore } from '../../weights/store.js';
import type { TinyDecoderEngine } from '../engine-models.js';
import { onTfjs } from './host-boundary.js';
import { TfjsOps } from './tfjs-ops.js';

/** The tiny autoencoder's decoder (`architectures/tiny-autoencoder.ts`) run eagerly on TF.js, NHWC. */
export class TinyDecoder implements TinyDecoderEngine {
  private readonly ops: TfjsOps;

  constructor(
    readonly config: TinyAutoencoderConfig,
    readonly weights: WeightStore,
  ) {
    this.ops = new TfjsOps((n) => this.weights.get(n));
  }

  get scaleFactor(): number {
    return tinyDecoderScaleFactor(this.config);
  }

  decode(z: tf.Tensor4D): tf.Tensor4D {
    return tf.tidy(() => tinyDecode(this.ops, this.config, z) as tf.Tensor4D);
  }

  async decodeOnHost(z: HostTensor): Promise<HostTensor> {
    return (await onTfjs([z], ([t]) => ({ image: this.decode(t as tf.Tensor4D) }))).image;
  }

  dispose(): void {
    this.weights.dispose();
  }
}
