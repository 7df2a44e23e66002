import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectedNoise } from '../../src/pipeline/types.js';
import { writeTinyPipeline } from '../../src/tiny/write-tiny-pipeline.js';
import { detInput } from '../../src/weights/deterministic.js';

/** Write a tiny pipeline into a fresh temp dir. */
export function tinyDir(flavour: 'sd1' | 'sd2'): string {
  return writeTinyPipeline(mkdtempSync(join(tmpdir(), `tiny-${flavour}-`)), { flavour });
}

/** The harness's injected noise: `pipe-noise/<k>`, `vae-noise/<k>`, `sched-noise/<k>`, counters per call. */
export function fixtureNoise(): InjectedNoise {
  const counters = { latents: 0, vae: 0, scheduler: 0 };
  const prefix = { latents: 'pipe-noise', vae: 'vae-noise', scheduler: 'sched-noise' };
  return (purpose, shape) => detInput(`${prefix[purpose]}/${counters[purpose]++}`, shape);
}
