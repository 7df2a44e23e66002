import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeReadableByAll } from '../src/readable-tree.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const modeOf = async (path: string) => (await stat(path)).mode & 0o7777;

describe('makeReadableByAll', () => {
  it('adds read to files, read+search to folders, search only to files someone could execute', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tiffin-readable-'));
    dirs.push(root);
    await mkdir(join(root, 'private', 'deeper'), { recursive: true });
    await writeFile(join(root, 'private', 'deeper', 'weights.bin'), 'w');
    await writeFile(join(root, 'run.sh'), '#!/bin/sh\n');
    await writeFile(join(root, 'open.txt'), 'o');
    await symlink('/etc/hostname', join(root, 'link'));
    await chmod(join(root, 'private', 'deeper', 'weights.bin'), 0o600);
    await chmod(join(root, 'run.sh'), 0o700);
    await chmod(join(root, 'open.txt'), 0o664);
    await chmod(join(root, 'private', 'deeper'), 0o700);
    await chmod(join(root, 'private'), 0o700);
    await chmod(root, 0o700);

    await makeReadableByAll(root);

    expect(await modeOf(root)).toBe(0o755);
    expect(await modeOf(join(root, 'private'))).toBe(0o755);
    expect(await modeOf(join(root, 'private', 'deeper'))).toBe(0o755);
    expect(await modeOf(join(root, 'private', 'deeper', 'weights.bin'))).toBe(0o644);
    expect(await modeOf(join(root, 'run.sh'))).toBe(0o755);
    // Already readable: unchanged (write bits are never added or removed).
    expect(await modeOf(join(root, 'open.txt'))).toBe(0o664);
  });
});
