import * as tf from '@tensorflow/tfjs';
import { afterEach, describe, expect, it } from 'vitest';
import { selectBackend } from '../src/backend.js';

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
    expect(logs).toEqual(['@tiffin/diffusion: using tfjs backend wasm']);
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
