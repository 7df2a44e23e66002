import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tinyDir } from '../helpers/tiny.js';

const here = join(import.meta.dirname, 'without-tfjs');
const packageRoot = join(import.meta.dirname, '..', '..');

describe('the onnxruntime engine without TensorFlow.js', () => {
  const dir = tinyDir('sd1');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds its graphs and opens its sessions in a process where importing @tensorflow/* throws', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--conditions=source',
        '--import',
        'tsx',
        '--import',
        join(here, 'forbid-tfjs.mjs'),
        join(here, 'load-engine.mts'),
        dir,
      ],
      // From the package folder, where `tsx` resolves.
      { cwd: packageRoot, timeout: 120_000 },
    );
    const seen = JSON.parse(stdout.trim().split('\n').at(-1) as string);
    // The hook is active (so a tfjs import on the engine's path would have failed the load)...
    expect(seen.tfjsError).toMatch(/forbidden import: @tensorflow\/tfjs/);
    // ...and the engine loaded the tiny pipeline, LoRA branch inputs included.
    expect(seen.unetChannels).toEqual([32, 64]);
    expect(seen.loraWeights).toBeGreaterThan(0);
  }, 150_000);
});
