import { createRequire } from 'node:module';
import type * as TF from '@tensorflow/tfjs';
import { MissingDependencyException } from '@tiffin/core/internal';
import type { HostTensor } from './host-tensor.js';

let loaded: typeof TF | undefined;

/**
 * TF.js, loaded on first use: only a caller on the TF.js engine (or one handing in TF.js tensors) ever needs it, so
 * the onnxruntime engine runs without it installed. Synchronous, as the scheduler API is; Node's ESM and CommonJS
 * loaders share the one `@tensorflow/tfjs` instance (it is a CommonJS package).
 */
export function tfjs(): typeof TF {
  if (!loaded) {
    try {
      loaded = createRequire(import.meta.url)('@tensorflow/tfjs') as typeof TF;
    } catch (e) {
      if ((e as { code?: string }).code === 'MODULE_NOT_FOUND')
        throw MissingDependencyException.forPackage('@tensorflow/tfjs', 'TF.js tensors', e);
      throw e;
    }
  }
  return loaded;
}

/** Whether `x` is a TF.js tensor (checked by shape, without loading TF.js). */
export function isTfTensor(x: unknown): x is TF.Tensor {
  return (
    typeof x === 'object' && x !== null && 'dataId' in x && typeof (x as TF.Tensor).dataSync === 'function'
  );
}

/** A TF.js tensor's values on the host (a copy). */
export function fromTf(t: TF.Tensor): HostTensor {
  return { data: Float32Array.from(t.dataSync() as Float32Array), shape: [...t.shape] };
}

/** A host tensor as a new TF.js tensor (owned by the caller). */
export function toTf<R extends TF.Rank = TF.Rank>(h: HostTensor): TF.Tensor<R> {
  return tfjs().tensor<TF.Rank>(h.data, [...h.shape], 'float32') as TF.Tensor<R>;
}

/** A host tensor or a TF.js tensor: what the engine-neutral APIs accept. */
export type AnyTensor = HostTensor | TF.Tensor;

/** `x` on the host (TF.js tensors are read, host tensors passed through). */
export function asHost(x: AnyTensor): HostTensor {
  return isTfTensor(x) ? fromTf(x) : x;
}

/** `h` in the form the caller gave (`like`): a TF.js tensor for TF.js callers, else the host tensor. */
export function like<T extends AnyTensor>(like: T, h: HostTensor): T {
  return (isTfTensor(like) ? toTf(h) : h) as T;
}
