import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exportedNames } from './public-names.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIFFUSION = join(ROOT, 'packages/diffusion');
/** The most names `@tiffin/diffusion`'s root entry may export (values and types). */
const MAX_PUBLIC_NAMES = 80;

const [rootNames, testingNames, coreNames, buildNames, onnxNames] = exportedNames(
  join(DIFFUSION, 'src/index.ts'),
  join(DIFFUSION, 'src/testing.ts'),
  join(ROOT, 'packages/core/src/index.ts'),
  join(ROOT, 'packages/build/src/index.ts'),
  join(ROOT, 'packages/onnx/src/index.ts'),
) as [string[], string[], string[], string[], string[]];

describe("@tiffin/diffusion's entries", () => {
  it(`the root exports at most ${MAX_PUBLIC_NAMES} names, the pipeline and the service among them`, () => {
    expect(rootNames.length).toBeLessThanOrEqual(MAX_PUBLIC_NAMES);
    expect(rootNames).toEqual(
      expect.arrayContaining(['StableDiffusionPipeline', 'createDiffusionService', 'createScheduler']),
    );
  });

  it('what tests build models with is in /testing, not in the root', () => {
    expect(testingNames).toEqual(
      expect.arrayContaining(['writeTinyPipeline', 'detWeight', 'unetWeightSpecs']),
    );
    expect(testingNames.filter((name) => rootNames.includes(name))).toEqual([]);
  });

  it("re-exports none of @tiffin/onnx, and no name of core's or build's entry", () => {
    const elsewhere = new Set([...coreNames, ...buildNames, ...onnxNames]);
    expect(rootNames.filter((name) => elsewhere.has(name))).toEqual([]);
    // One spelling of each: `text2img` is the pipeline's method and the route.
    for (const name of ['DEFAULT_LIMITS', 'selectBackend', 'text2image'])
      expect(rootNames).not.toContain(name);
  });
});
