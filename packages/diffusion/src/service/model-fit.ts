import { existsSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@tiffin/core/internal';
import { componentWeightFiles } from '../weights/folder.js';
import { SafetensorsFile } from '../weights/safetensors.js';

/** The model's weights do not fit the memory of the chosen backend: refused at start, before loading. */
export class ModelTooLargeError extends ConfigError {
  static override readonly code: string = 'MODEL_TOO_LARGE';
}

/** tfjs-backend-wasm's heap: a 32-bit address space. */
export const WASM_HEAP_BYTES = 4 * 1024 ** 3;
/** Kept free of weights for activations (a 512 px SD step needs a few hundred MB). */
const ACTIVATION_RESERVE_BYTES = 512 * 1024 ** 2;

const COMPONENTS: ReadonlyArray<[string, string]> = [
  ['text_encoder', 'model'],
  // SDXL's second encoder (counted when the folder has one).
  ['text_encoder_2', 'model'],
  ['unet', 'diffusion_pytorch_model'],
  ['vae', 'diffusion_pytorch_model'],
];

/**
 * Bytes the pipeline's weights take once loaded: every tensor widened to float32 (the tfjs backends have
 * no float16), counted from the safetensors headers alone, so nothing is read or allocated.
 */
export function float32WeightBytes(modelDir: string): number {
  let bytes = 0;
  for (const [component, stem] of COMPONENTS) {
    if (component === 'text_encoder_2' && !existsSync(join(modelDir, component))) continue;
    for (const path of componentWeightFiles(join(modelDir, component), stem)) {
      const file = SafetensorsFile.open(path);
      try {
        for (const entry of file.entries.values()) bytes += 4 * entry.shape.reduce((a, b) => a * b, 1);
      } finally {
        file.close();
      }
    }
  }
  return bytes;
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;

/**
 * Throws `ModelTooLargeError` when the weights cannot fit the backend: wasm's 4 GiB heap (less room for
 * activations), or the machine's memory for the others. The message says what to do instead.
 */
export function assertModelFits(
  modelDir: string,
  backend: string,
  limits: { wasmHeapBytes?: number; memoryBytes?: number } = {},
): void {
  const bytes = float32WeightBytes(modelDir);
  if (backend === 'wasm') {
    const heap = limits.wasmHeapBytes ?? WASM_HEAP_BYTES;
    if (bytes + ACTIVATION_RESERVE_BYTES > heap) {
      throw new ModelTooLargeError(
        `The model's weights need ${gb(bytes)} as float32, more than the wasm backend's ${gb(heap)} heap ` +
          `holds with room to run (${gb(ACTIVATION_RESERVE_BYTES)} for activations). Serve it on a native ` +
          'backend (install @tensorflow/tfjs-node and pass --backend tensorflow), or choose a smaller model.',
      );
    }
    return;
  }
  const memory = limits.memoryBytes ?? totalmem();
  if (bytes > memory) {
    throw new ModelTooLargeError(
      `The model's weights need ${gb(bytes)} as float32, more than this machine's ${gb(memory)} of memory; ` +
        'run it on a machine with more memory, or choose a smaller model.',
    );
  }
}
