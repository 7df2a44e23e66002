import { defineProject } from 'vitest/config';

/**
 * Opt-in: `pnpm test:sd15` serves an SD1.5-shaped random model (2.1 GB, written on first use into
 * $TIFFIN_SD15_DIR or a temp folder) on onnxruntime end to end. Not part of `pnpm test` (minutes
 * and ~8 GB of memory).
 */
export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'diffusion-sd15',
    include: ['test/opt-in/*.e2e.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 3_600_000,
  },
});
