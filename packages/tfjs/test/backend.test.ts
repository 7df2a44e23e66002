import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { nativeAddonProblem, selectTfjsBackend, TFJS_BACKENDS } from '../src/index.js';

describe('TensorFlow.js backend choice', () => {
  it('passes over tfjs-node(-gpu) installed without their native addon, with the reason, and lands on wasm', async () => {
    expect(TFJS_BACKENDS).toEqual(['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu']);
    const choice = await selectTfjsBackend();
    // Neither native package can download libtensorflow here: both are skipped before import.
    expect(choice.name).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
    expect(choice.skipped.map((s) => s.name)).toEqual(['tensorflow-gpu', 'tensorflow']);
    for (const s of choice.skipped)
      expect(s.reason).toMatch(/installed without its native addon|is not installed/);
  });

  it('uses a named backend; fails with every reason when none loads', async () => {
    expect((await selectTfjsBackend(['cpu'])).name).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    await expect(selectTfjsBackend(['tensorflow'])).rejects.toThrow(
      /No TensorFlow.js backend loaded: tensorflow: /,
    );
  });

  it('a tfjs-node package counts only with its native addon in lib/napi-v*', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tfjs-node-'));
    expect(nativeAddonProblem(dir)).toMatch(/installed without its native addon/);
    mkdirSync(join(dir, 'lib', 'napi-v8'), { recursive: true });
    expect(nativeAddonProblem(dir)).toMatch(/tfjs_binding\.node/);
    writeFileSync(join(dir, 'lib', 'napi-v8', 'tfjs_binding.node'), '');
    expect(nativeAddonProblem(dir)).toBeNull();
  });
});
