import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoraPathError, LoraRoots } from '../../src/service/lora-roots.js';

let base: string;
let roots: LoraRoots;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'lora-roots-'));
  await mkdir(join(base, 'loras/styles'), { recursive: true });
  await mkdir(join(base, 'other'), { recursive: true });
  await writeFile(join(base, 'loras/a.safetensors'), 'a');
  await writeFile(join(base, 'loras/styles/b.safetensors'), 'b');
  await writeFile(join(base, 'other/secret.safetensors'), 's');
  await symlink(join(base, 'other/secret.safetensors'), join(base, 'loras/escape.safetensors'));
  await symlink(join(base, 'loras/a.safetensors'), join(base, 'loras/alias.safetensors'));
  roots = await LoraRoots.create([join(base, 'loras'), join(base, 'missing'), undefined]);
});
afterAll(() => rm(base, { recursive: true, force: true }));

describe('LoraRoots', () => {
  it('keeps existing roots only', () => {
    expect(roots.directories).toHaveLength(1);
  });

  it('resolves relative names inside a root, including subfolders and in-root symlinks', async () => {
    expect(await roots.resolve('a.safetensors')).toBe(join(base, 'loras/a.safetensors'));
    expect(await roots.resolve('styles/b.safetensors')).toBe(join(base, 'loras/styles/b.safetensors'));
    expect(await roots.resolve('alias.safetensors')).toBe(join(base, 'loras/a.safetensors'));
    expect(await roots.resolve(join(base, 'loras/a.safetensors'))).toBe(join(base, 'loras/a.safetensors'));
  });

  it.each([
    ['../other/secret.safetensors'],
    ['styles/../../other/secret.safetensors'],
    ['escape.safetensors'],
    ['/etc/passwd'],
  ])('refuses %s (outside every root)', async (name) => {
    await expect(roots.resolve(name)).rejects.toThrow(/outside the allowed LoRA directories/);
  });

  it('reports a missing file and a directory clearly', async () => {
    await expect(roots.resolve('nope.safetensors')).rejects.toThrow(/not found/);
    await expect(roots.resolve('styles')).rejects.toThrow(/not a file/);
    await expect(roots.resolve('')).rejects.toBeInstanceOf(LoraPathError);
  });

  it('refuses every name when no root is configured', async () => {
    const none = await LoraRoots.create([]);
    await expect(none.resolve('a.safetensors')).rejects.toThrow(/no LoRA directory/);
  });
});
