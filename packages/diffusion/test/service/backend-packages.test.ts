import { MemoryLogger } from '@tiffin/core';
import { MissingDependencyException } from '@tiffin/core/internal';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBackendPackages, missingBackendPackages } from '../../src/backend-packages.js';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';

// The WebGPU packages are optional and not installed in this workspace (see backend-webgpu.test.ts).
describe('optional backend packages', () => {
  afterEach(() => {
    delete process.env.TIFFIN_TF_BACKEND;
  });

  it('lists what a forced webgpu backend lacks, and nothing for the TF.js peers the workspace installs', () => {
    expect(missingBackendPackages('webgpu')).toEqual([
      'webgpu@0.6.2',
      '@tensorflow/tfjs-backend-webgpu@4.22.0',
    ]);
    for (const backend of ['wasm', 'cpu', 'tensorflow', 'onnxruntime'] as const)
      expect(missingBackendPackages(backend)).toEqual([]);
    expect(() => assertBackendPackages('cpu')).not.toThrow();
    expect(() => assertBackendPackages(undefined)).not.toThrow();
  });

  it('fails the service start before the model worker is started, naming both packages in one line', async () => {
    const { service } = createDiffusionService({
      modelDir: tinyDir('sd1'),
      backend: 'webgpu',
      logger: new MemoryLogger(),
    });
    const err = (await service.startup().catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(MissingDependencyException);
    expect(err.message).not.toContain('\n');
    expect(err.message).toBe(
      'the webgpu backend (TensorFlow.js engine) needs packages that are not installed ' +
        '(webgpu, @tensorflow/tfjs-backend-webgpu): run `npm install webgpu@0.6.2 @tensorflow/tfjs-backend-webgpu@4.22.0`',
    );
    await service.shutdown();
  });

  it('applies the same check to $TIFFIN_TF_BACKEND when no backend option is given', async () => {
    process.env.TIFFIN_TF_BACKEND = 'webgpu';
    const { service } = createDiffusionService({ modelDir: tinyDir('sd1'), logger: new MemoryLogger() });
    await expect(service.startup()).rejects.toThrow(/npm install webgpu@0\.6\.2 /);
    await service.shutdown();
  });
});
