import * as tf from '@tensorflow/tfjs';
import { InvalidArgument } from '@tiffin/core';
import { assertNativeAddon } from './native-addon.js';

/**
 * TensorFlow.js back ends, fastest first: libtensorflow with CUDA (`@tensorflow/tfjs-node-gpu`), libtensorflow
 * on the CPU (`@tensorflow/tfjs-node`), WebAssembly (`@tensorflow/tfjs-backend-wasm`, always installed), and
 * plain JavaScript. Measured here on a 64×64 convolutional classifier: wasm 10–20 ms a call, cpu 550–650 ms;
 * on a 4-8-3 MLP both take well under a millisecond, so wasm comes before cpu.
 */
export const TFJS_BACKENDS = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type TfjsBackendName = (typeof TFJS_BACKENDS)[number];

export interface TfjsBackendChoice {
  name: TfjsBackendName;
  /** Why backends before it were passed over. */
  skipped: { name: TfjsBackendName; reason: string }[];
}

async function tryBackend(name: TfjsBackendName, threads: number | undefined): Promise<void> {
  switch (name) {
    case 'tensorflow-gpu':
    case 'tensorflow': {
      // Native addons are optional dependencies whose binaries are often absent: check, then load lazily.
      const pkg = name === 'tensorflow-gpu' ? '@tensorflow/tfjs-node-gpu' : '@tensorflow/tfjs-node';
      assertNativeAddon(pkg, import.meta.url);
      await import(pkg);
      if (!(await tf.setBackend('tensorflow'))) throw new Error('tensorflow backend did not initialise');
      return;
    }
    case 'wasm': {
      const wasm = await import('@tensorflow/tfjs-backend-wasm');
      // Threads need a cross-origin-isolated SharedArrayBuffer build; in Node the count is a hint the backend may ignore.
      if (threads !== undefined) wasm.setThreadsCount(threads);
      if (!(await tf.setBackend('wasm'))) throw new Error('wasm backend did not initialise');
      return;
    }
    case 'cpu':
      if (!(await tf.setBackend('cpu'))) throw new Error('cpu backend did not initialise');
      return;
  }
}

/** Checks a user's back-end list (`executionProviders`) before any thread starts. */
export function checkBackendNames(names: readonly string[] | undefined): TfjsBackendName[] {
  const list = names && names.length > 0 ? names : TFJS_BACKENDS;
  for (const n of list) {
    if (!(TFJS_BACKENDS as readonly string[]).includes(n))
      throw new InvalidArgument(`Unknown TensorFlow.js backend '${n}': use ${TFJS_BACKENDS.join(', ')}`);
  }
  return [...list] as TfjsBackendName[];
}

let chosen: Promise<TfjsBackendChoice> | undefined;
let chosenFor = '';

/**
 * Make the first back end of `order` that loads tfjs's backend in this thread (tfjs has one per thread; each
 * worker thread chooses its own). The same request later returns the same choice.
 */
export function selectTfjsBackend(
  order: readonly TfjsBackendName[] = TFJS_BACKENDS,
  threads?: number,
): Promise<TfjsBackendChoice> {
  const key = `${order.join(',')}/${threads ?? ''}`;
  if (chosen && chosenFor === key) return chosen;
  chosenFor = key;
  chosen = (async () => {
    const skipped: TfjsBackendChoice['skipped'] = [];
    for (const name of order) {
      try {
        await tryBackend(name, threads);
        return { name, skipped };
      } catch (e) {
        skipped.push({ name, reason: (e as Error).message.split('\n')[0] ?? String(e) });
      }
    }
    chosen = undefined;
    throw new Error(
      `No TensorFlow.js backend loaded: ${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`,
    );
  })();
  return chosen;
}
