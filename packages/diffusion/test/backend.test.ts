import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { nativeAddonProblem, selectBackend } from '../src/backend.js';

describe('backend selection', () => {
  afterEach(() => {
    delete process.env.TIFFIN_TF_BACKEND;
  });

  it('falls back past missing native addons and logs the choice', async () => {
    const logs: string[] = [];
    const choice = await selectBackend(undefined, (m) => logs.push(m));
    // tfjs-node(-gpu) have no native binary here, so wasm is the first that loads.
    expect(choice.name).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
    expect(choice.skipped.map((s) => s.name)).toEqual(['tensorflow-gpu', 'tensorflow']);
    // Skipped before import (no duplicate kernel registrations), with the reason.
    for (const s of choice.skipped)
      expect(s.reason).toMatch(/installed without its native addon|is not installed/);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(
      /^@tiffin\/diffusion: using tfjs backend wasm; skipped tensorflow-gpu: .+; tensorflow: .+native addon/,
    );
  });

  it('TIFFIN_TF_BACKEND forces a backend; unknown names are rejected', async () => {
    process.env.TIFFIN_TF_BACKEND = 'cpu';
    const choice = await selectBackend(undefined, () => {});
    expect(choice.name).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    await expect(selectBackend('metal' as 'cpu', () => {})).rejects.toThrow(/unknown tfjs backend "metal"/);
    await expect(selectBackend('tensorflow', () => {})).rejects.toThrow(
      /no tfjs backend could be loaded: tensorflow:/,
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
