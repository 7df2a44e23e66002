import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFound } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { CheckpointCatalog, startCheckpoint } from '../../src/service/checkpoint-catalog.js';

/** A folder of fake checkpoints (the catalog reads names and `model_index.json`, never weights). */
function folder(): { dir: string; outside: string } {
  const root = mkdtempSync(join(tmpdir(), 'tiffin-catalog-'));
  const dir = join(root, 'models');
  for (const name of ['alpha', 'beta', 'notes', '.hidden']) mkdirSync(join(dir, name), { recursive: true });
  for (const name of ['alpha', 'beta', '.hidden']) writeFileSync(join(dir, name, 'model_index.json'), '{}');
  writeFileSync(join(dir, 'gamma.safetensors'), '');
  writeFileSync(join(dir, 'old.ckpt'), '');
  // A checkpoint beside the folder, which no name may reach.
  const outside = join(root, 'secret');
  mkdirSync(outside);
  writeFileSync(join(outside, 'model_index.json'), '{}');
  return { dir, outside };
}

describe('CheckpointCatalog', () => {
  it('lists the start model, then the diffusers folders and .safetensors files of the folder', () => {
    const { dir, outside } = folder();
    const catalog = new CheckpointCatalog(startCheckpoint(join(dir, 'beta')), dir);
    expect(catalog.list().map((c) => c.name)).toEqual(['beta', 'alpha', 'gamma.safetensors']);
    expect(catalog.resolve(null).name).toBe('beta');
    expect(catalog.resolve('gamma').path).toBe(join(dir, 'gamma.safetensors'));
    // Added while serving: found on the first request that names it.
    mkdirSync(join(dir, 'delta'));
    writeFileSync(join(dir, 'delta', 'model_index.json'), '{}');
    expect(catalog.resolve('delta').path).toBe(join(dir, 'delta'));
    for (const name of [
      '..',
      '.',
      '../secret',
      outside,
      join(dir, 'alpha'),
      'alpha/',
      'alpha/../beta',
      '.hidden',
      'notes',
      'old.ckpt',
      'alpha\0',
      'ålpha',
      'a'.repeat(100_000),
    ]) {
      expect(() => catalog.resolve(name)).toThrow(NotFound);
    }
  });

  it('echoes a refused name bounded and printable, never a path', () => {
    const { dir } = folder();
    const catalog = new CheckpointCatalog(startCheckpoint(join(dir, 'alpha')), dir);
    const refusal = (() => {
      try {
        catalog.resolve(`ålpha${'x'.repeat(1000)}`);
      } catch (err) {
        return (err as Error).message;
      }
      return '';
    })();
    expect(refusal).toMatch(/^model "\?lphax+" not found/);
    expect(refusal.length).toBeLessThan(300);
    expect(refusal).not.toContain(dir);
  });

  it('without a folder serves the start model alone', () => {
    const { dir } = folder();
    const catalog = new CheckpointCatalog(startCheckpoint(join(dir, 'alpha')), undefined);
    expect(catalog.selectable).toBe(false);
    expect(catalog.list().map((c) => c.name)).toEqual(['alpha']);
    expect(() => catalog.resolve('beta')).toThrow(NotFound);
  });
});
