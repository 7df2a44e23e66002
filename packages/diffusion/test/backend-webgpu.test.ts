import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs';
import { MissingDependencyException } from '@tiffin/core/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKEND_NAMES, BACKEND_PREFERENCE, selectBackend, WEBGPU_PACKAGES } from '../src/backend.js';

// The WebGPU packages are optional and deliberately not installed in this workspace (132 MB of
// Dawn binaries for every platform): what CI can check is how selection behaves without them.
describe('webgpu backend selection', () => {
  afterEach(() => {
    delete process.env.TIFFIN_TF_BACKEND;
  });

  it('is accepted by name but never chosen automatically', () => {
    expect(BACKEND_NAMES).toContain('webgpu');
    expect(BACKEND_PREFERENCE).not.toContain('webgpu');
  });

  it('the workspace really lacks the optional packages', () => {
    const require = createRequire(import.meta.url);
    expect(() => require.resolve('webgpu')).toThrow(/Cannot find module/);
    expect(() => require.resolve('@tensorflow/tfjs-backend-webgpu')).toThrow(/Cannot find module/);
  });

  it('forced without its packages: a clear error naming the package to install, and no backend change', async () => {
    await selectBackend('cpu', () => {});
    process.env.TIFFIN_TF_BACKEND = 'webgpu';
    const err = await selectBackend(undefined, () => {}).catch((e: unknown) => e as Error);
    // The missing packages' own one-line error, with the install command, not a wrapped list of reasons.
    expect(err).toBeInstanceOf(MissingDependencyException);
    expect((err as Error).message).toMatch(
      /^the webgpu backend \(TensorFlow\.js engine\) needs packages that are not installed .*: run `npm install webgpu@0\.6\.2 /,
    );
    expect(WEBGPU_PACKAGES.dawn).toBe('webgpu@0.6.2');
    expect(tf.getBackend()).toBe('cpu');
    // A failed forced choice is not cached: the next request selects again.
    const next = await selectBackend('wasm', () => {});
    expect(next.name).toBe('wasm');
  });
});
