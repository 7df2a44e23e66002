import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { UNetConfig } from '../../src/architectures/unet-config.js';
import type { TinyFlavour } from '../../src/tiny/tiny-configs.js';
import { tinyDir } from '../helpers/tiny.js';
import { writeTinyLora } from '../service/service-helpers.js';

const here = join(import.meta.dirname, 'without-tfjs');
const packageRoot = join(import.meta.dirname, '..', '..');
const forbidTfjs = ['--import', join(here, 'forbid-tfjs.mjs')];

/** Runs a child script under tsx (optionally with TF.js imports forbidden) and parses its last line. */
async function child(script: string, args: string[], hooks: string[] = []): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', ...hooks, join(here, script), ...args],
    // From the package folder, where `tsx` resolves.
    { cwd: packageRoot, timeout: 120_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) as string);
}

describe('the onnxruntime engine without TensorFlow.js', () => {
  const dirs: string[] = [];
  const fresh = (flavour: TinyFlavour) => {
    const dir = tinyDir(flavour);
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('imports the package root in a process where importing @tensorflow/* throws; the TF.js names are in /tfjs', async () => {
    const seen = await child('import-root.mts', [], forbidTfjs);
    expect(seen).toEqual({
      pipeline: 'function',
      rootHasTfjsNames: false,
      // The hook is active: the TF.js entry, which loads TF.js, fails under it.
      tfjsEntryError: expect.stringMatching(/forbidden import: @tensorflow\/tfjs/),
      tfjsModulesLoaded: 0,
    });
  }, 60_000);

  it('builds its graphs and opens its sessions in a process where importing @tensorflow/* throws', async () => {
    const seen = await child('load-engine.mts', [fresh('sd1')], forbidTfjs);
    // The hook is active (so a tfjs import on the engine's path would have failed the load)...
    expect(seen.tfjsError).toMatch(/forbidden import: @tensorflow\/tfjs/);
    // ...and the engine loaded the tiny pipeline, LoRA branch inputs included.
    expect(seen.unetChannels).toEqual([32, 64]);
    expect(seen.loraWeights).toBeGreaterThan(0);
  }, 150_000);

  for (const flavour of ['sd1', 'sdxl'] as const) {
    it(`${flavour}: text2img and img2img with a LoRA (fused and unfused) give the same images without TF.js`, async () => {
      const dir = fresh(flavour);
      const unet = JSON.parse(readFileSync(join(dir, 'unet', 'config.json'), 'utf8')) as UNetConfig;
      const lora = writeTinyLora(dir, 'lora.safetensors', 'without-tfjs', unet);
      const args = [dir, 'onnxruntime', lora];
      // The normal process first: it also writes the graph cache both then use.
      const normal = await child('generate.mts', args);
      const without = await child('generate.mts', args, forbidTfjs);
      expect(without.tfjsModulesLoaded).toBe(0);
      expect(Object.keys(without.images as object)).toEqual([
        'text2img',
        'text2imgEulerAFusedLora',
        'img2imgUnfusedLora',
      ]);
      expect(without.images).toEqual(normal.images);
      // The LoRA changes the image: the comparison covers its path.
      const images = without.images as Record<string, string>;
      expect(new Set(Object.values(images)).size).toBe(3);
    }, 240_000);
  }
});
