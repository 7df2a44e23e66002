import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { BACKEND_PREFERENCE, selectBackend } from '../src/backend.js';

describe('backend selection', () => {
  afterEach(() => {
    delete process.env.TIFFIN_TF_BACKEND;
  });

  it('falls back past missing native addons to onnxruntime (no tfjs backend) and logs the choice', async () => {
    const logs: string[] = [];
    const choice = await selectBackend(undefined, (m) => logs.push(m));
    // tfjs-node-gpu has no native binary here; onnxruntime-node ships its CPU library.
    expect(choice.name).toBe('onnxruntime');
    // The latent maths runs on host arrays: onnxruntime sets up no tfjs backend.
    expect(choice.tfBackend).toBe('none');
    expect(choice.skipped.map((s) => s.name)).toEqual(['tensorflow-gpu']);
    // Skipped before import (no duplicate kernel registrations), with the reason.
    for (const s of choice.skipped)
      expect(s.reason).toMatch(/installed without its native addon|is not installed/);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(
      /^@tiffin\/diffusion: using backend onnxruntime; skipped tensorflow-gpu: .+native addon/,
    );
  });

  it('the auto order is tfjs-node-gpu, onnxruntime, tfjs-node, wasm, cpu; a named backend is used as named', async () => {
    const choice = await selectBackend('wasm', () => {});
    expect(BACKEND_PREFERENCE).toEqual(['tensorflow-gpu', 'onnxruntime', 'tensorflow', 'wasm', 'cpu']);
    expect(choice.name).toBe('wasm');
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
});
