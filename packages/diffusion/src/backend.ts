import * as tf from '@tensorflow/tfjs';

/** Backends in order of preference; `tfjs-node(-gpu)` register `tensorflow`. */
export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
export const BACKEND_PREFERENCE: readonly BackendName[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];

export interface BackendChoice {
  name: BackendName;
  /** tfjs backend id actually active (`tensorflow`, `wasm`, `cpu`). */
  tfBackend: string;
  /** Why preferred backends were skipped. */
  skipped: { name: BackendName; reason: string }[];
}

async function tryBackend(name: BackendName): Promise<string> {
  switch (name) {
    case 'tensorflow-gpu':
      // Native addons are optional dependencies whose binaries are often absent: load lazily.
      await import('@tensorflow/tfjs-node-gpu' as string);
      if (!(await tf.setBackend('tensorflow'))) throw new Error('tensorflow backend did not initialise');
      return 'tensorflow';
    case 'tensorflow':
      await import('@tensorflow/tfjs-node' as string);
      if (!(await tf.setBackend('tensorflow'))) throw new Error('tensorflow backend did not initialise');
      return 'tensorflow';
    case 'wasm':
      await import('@tensorflow/tfjs-backend-wasm');
      if (!(await tf.setBackend('wasm'))) throw new Error('wasm backend did not initialise');
      return 'wasm';
    case 'cpu':
      if (!(await tf.setBackend('cpu'))) throw new Error('cpu backend did not initialise');
      return 'cpu';
  }
}

let current: Promise<BackendChoice> | null = null;
let currentRequest: string | undefined;

/**
 * Select the tfjs backend: `requested` (or env TIFFIN_TF_BACKEND) forces one; otherwise the
 * first of tfjs-node-gpu, tfjs-node, wasm, cpu that loads. tfjs has one global backend per
 * process, so the choice is made once and later calls with the same request reuse it.
 */
export function selectBackend(
  requested: BackendName | undefined = process.env.TIFFIN_TF_BACKEND as BackendName | undefined,
  log: (msg: string) => void = (m) => console.info(m),
): Promise<BackendChoice> {
  if (requested !== undefined && !BACKEND_PREFERENCE.includes(requested)) {
    return Promise.reject(
      new Error(`unknown tfjs backend "${requested}" (use one of ${BACKEND_PREFERENCE.join(', ')})`),
    );
  }
  if (current && currentRequest === requested) return current;
  currentRequest = requested;
  current = (async () => {
    const order = requested ? [requested] : BACKEND_PREFERENCE;
    const skipped: BackendChoice['skipped'] = [];
    for (const name of order) {
      try {
        const tfBackend = await tryBackend(name);
        log(`@tiffin/diffusion: using tfjs backend ${name}`);
        return { name, tfBackend, skipped };
      } catch (e) {
        skipped.push({ name, reason: (e as Error).message.split('\n')[0] });
      }
    }
    current = null;
    throw new Error(
      `no tfjs backend could be loaded: ${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')}`,
    );
  })();
  return current;
}
