import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  assertNoSymlinkEscape,
  containedPath,
  isInside,
  unsafeRelativePath,
} from '../../src/store/contained-path.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('paths from outside stay under their destination', () => {
  it('refuses every spelling of a way out', () => {
    for (const name of [
      '',
      '..',
      '../x',
      // outside-reads: ignore (a hostile hub file name the helper must refuse, not a path this test reads)
      'unet/../../../../pwned/evil.safetensors',
      'unet/..',
      '/etc/passwd',
      'C:/Windows/x',
      'c:x',
      'unet\\..\\..\\x',
      'a//b',
      './a',
      'a/./b',
      'a/\0b',
    ]) {
      expect(unsafeRelativePath(name), name).not.toBeNull();
      expect(() => containedPath('/store', name, 'file')).toThrow(/refused/);
    }
  });

  it('joins plain relative names, non-ASCII ones too', () => {
    expect(unsafeRelativePath('unet/diffusion_pytorch_model.safetensors')).toBeNull();
    expect(containedPath('/store', 'unet/модель..safetensors', 'file')).toBe(
      '/store/unet/модель..safetensors',
    );
    expect(isInside('/store', '/store/a/b')).toBe(true);
    expect(isInside('/store', '/store')).toBe(true);
    expect(isInside('/store', '/store-other/a')).toBe(false);
    expect(isInside('/store', '/')).toBe(false);
  });

  it('refuses a path that a symlink inside the destination carries out of it', async () => {
    dir = await mkdtemp(join(tmpdir(), 'contained-'));
    const root = join(dir, 'root');
    await mkdir(join(root, 'inside'), { recursive: true });
    await mkdir(join(dir, 'outside'));
    await symlink(join(dir, 'outside'), join(root, 'link'));
    await expect(assertNoSymlinkEscape(root, join(root, 'link', 'new', 'file'), 'file')).rejects.toThrow(
      /symbolic link; refused/,
    );
    await expect(assertNoSymlinkEscape(root, join(root, 'inside', 'new', 'file'), 'file')).resolves.toBe(
      undefined,
    );
  });
});
