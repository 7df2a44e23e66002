import * as tf from '@tensorflow/tfjs';
import type { HostTensor } from '../../latents/host-tensor.js';
import { fromTf } from '../../latents/tfjs-interop.js';

/** `O` with each TF.js tensor read back to the host. */
type OnHost<O> = { [K in keyof O]: O[K] extends tf.Tensor ? HostTensor : HostTensor | undefined };

/**
 * The TF.js engine's model boundary: the pipeline hands host arrays in and takes host arrays back, so the latent
 * maths is the same as on onnxruntime. `run` gets the inputs as TF.js tensors (undefined stays undefined); every
 * tensor made here, and every tensor `run` returns, is released.
 */
export async function onTfjs<O extends { [K in keyof O]: tf.Tensor | undefined }>(
  inputs: readonly (HostTensor | undefined)[],
  run: (tensors: (tf.Tensor | undefined)[]) => O,
): Promise<OnHost<O>> {
  const made = inputs.map((h) => (h ? tf.tensor(h.data, [...h.shape], 'float32') : undefined));
  try {
    const out = run(made);
    const host: Record<string, HostTensor | undefined> = {};
    for (const [k, t] of Object.entries(out) as [string, tf.Tensor | undefined][]) {
      host[k] = t && fromTf(t);
      t?.dispose();
    }
    return host as OnHost<O>;
  } finally {
    for (const t of made) t?.dispose();
  }
}
