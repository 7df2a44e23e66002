import * as tf from '@tensorflow/tfjs';

/**
 * The widely used linear approximation of SD 1.x/2.x's VAE decoder on 4 latent channels (rows: latent
 * channel, columns: R, G, B): a blurry 1/8-size colour preview in microseconds instead of a decode.
 */
const LATENT_RGB = [
  [0.298, 0.207, 0.208],
  [0.187, 0.286, 0.173],
  [-0.158, 0.189, 0.264],
  [-0.184, -0.271, -0.473],
];

/**
 * A low-resolution RGB preview (latent size, uint8 HWC) of the first image of NHWC latents, by the
 * linear approximation above (other channel counts: the channel mean as grey).
 */
export function latentPreview(latents: tf.Tensor4D): { width: number; height: number; data: Uint8Array } {
  const [, height, width, channels] = latents.shape;
  const rgb = tf.tidy(() => {
    const first = latents
      .slice([0, 0, 0, 0], [1, height, width, channels])
      .reshape([height * width, channels]);
    const mapped =
      channels === LATENT_RGB.length
        ? tf.matMul(first as tf.Tensor2D, tf.tensor2d(LATENT_RGB))
        : tf.tile(tf.mean(first, 1, true), [1, 3]);
    return tf.clipByValue(tf.mul(tf.add(mapped, 1), 127.5), 0, 255);
  });
  const values = rgb.dataSync();
  rgb.dispose();
  return { width, height, data: Uint8Array.from(values, (v) => Math.round(v)) };
}
