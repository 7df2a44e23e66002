import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ModelStore } from '@tiffin/core';
import { create as createTar, extract as extractTar, Header } from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultUnpackedLimit, exportEntry, importEntry } from '../src/index.js';

// Every store here is given its own root, so no $TIFFIN_HOME is read or changed.
let home: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'tiffin-archive-'));
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('store archives (exportEntry / importEntry)', () => {
  it('exports and imports an archive', async () => {
    const store = new ModelStore(join(home, 'models'));
    const saved = await store.save({
      name: 'portable',
      files: { 'w.bin': 'weights', 'nested/x': 'y' },
      labels: { a: 'b' },
    });
    const archive = join(home, 'out', 'portable.tar.gz');
    await exportEntry(store, 'portable:latest', archive);
    const other = new ModelStore(join(home, 'elsewhere'));
    const imported = await importEntry(other, archive);
    expect(imported.tag).toBe(saved.tag);
    expect(imported.manifest).toEqual(saved.manifest);
    expect(await readFile(join(imported.filesPath, 'nested/x'), 'utf8')).toBe('y');
    // Files added to the entry folder by hand are not part of the model and are not exported.
    await writeFile(join(saved.path, 'local-note.txt'), 'not listed');
    await exportEntry(store, saved.tag, archive);
    expect((await importEntry(new ModelStore(join(home, 'third')), archive)).tag).toBe(saved.tag);
    // Importing the same archive twice is a no-op.
    expect((await importEntry(other, archive)).tag).toBe(saved.tag);
    await expect(importEntry(other, join(home, 'missing.tar.gz'))).rejects.toThrow(/not found/);
  });

  it('rejects an archive whose files do not match its manifest', async () => {
    const store = new ModelStore(join(home, 'models'));
    const saved = await store.save({ name: 'tampered', files: { w: 'original' } });
    await writeFile(join(saved.filesPath, 'w'), 'changed!');
    const archive = join(home, 'tampered.tar.gz');
    await exportEntry(store, saved.tag, archive);
    const other = new ModelStore(join(home, 'elsewhere'));
    await expect(importEntry(other, archive)).rejects.toThrow(/does not match its manifest/);
    expect(await other.list()).toEqual([]);
  });

  it('refuses an archive with a member that climbs out of the staging folder, and writes nothing outside it', async () => {
    const store = new ModelStore(join(home, 'models'));
    const saved = await store.save({ name: 'climber', files: { w: '1' } });
    const exported = join(home, 'climber.tar.gz');
    await exportEntry(store, saved.tag, exported);
    // The archive's own members plus '../escape.txt', written as a hostile tool would (paths kept as given).
    const unpacked = join(home, 'unpacked', 'entry');
    await mkdir(unpacked, { recursive: true });
    await extractTar({ file: exported, cwd: unpacked });
    await writeFile(join(home, 'unpacked', 'escape.txt'), 'outside');
    const hostile = join(home, 'hostile.tar.gz');
    await createTar({ gzip: true, file: hostile, cwd: unpacked, preservePaths: true }, [
      ...(await readdir(unpacked)),
      '../escape.txt',
    ]);
    const target = new ModelStore(join(home, 'target'));
    await expect(importEntry(target, hostile)).rejects.toThrow();
    expect(await stat(join(home, 'target', '.staging', 'escape.txt')).catch(() => null)).toBeNull();
    expect(await readdir(join(home, 'target', '.staging'))).toEqual([]);
    expect(await target.list()).toEqual([]);
  });

  it('refuses a truncated archive and a file that is not an archive, leaving the store empty', async () => {
    const store = new ModelStore(join(home, 'models'));
    const saved = await store.save({ name: 'cut', files: { 'w.bin': new Uint8Array(64 * 1024).fill(3) } });
    const archive = join(home, 'cut.tar.gz');
    await exportEntry(store, saved.tag, archive);
    const bytes = await readFile(archive);
    await writeFile(archive, bytes.subarray(0, bytes.length >> 1));
    const notArchive = join(home, 'note.tar.gz');
    await writeFile(notArchive, 'just some text, not gzip');
    const target = new ModelStore(join(home, 'target'));
    await expect(importEntry(target, archive)).rejects.toThrow();
    await expect(importEntry(target, notArchive)).rejects.toThrow();
    expect(await target.list()).toEqual([]);
  });

  it('refuses an archive whose members unpack past the limit from their headers, before writing anything', async () => {
    // A member whose header says 2 GiB, followed by 1 MiB of its zeros: a bomb (2 GiB from ~1 MB of gzip) cut
    // short so the test stays small. The header alone must refuse it.
    const header = Buffer.alloc(512);
    new Header({ path: 'files/w.bin', mode: 0o644, size: 2 ** 31, type: 'File', mtime: new Date(0) }).encode(
      header,
    );
    const bomb = join(home, 'bomb.tar.gz');
    await writeFile(bomb, gzipSync(Buffer.concat([header, Buffer.alloc(2 ** 20)])));
    expect(defaultUnpackedLimit(2 ** 20)).toBeLessThan(2 ** 31);
    const target = new ModelStore(join(home, 'target'));
    await expect(importEntry(target, bomb)).rejects.toThrow(/unpacks to more than 1073741824 bytes/);
    expect(await readdir(join(home, 'target', '.staging')).catch(() => [])).toEqual([]);
    expect(await target.list()).toEqual([]);
  });

  it('checks the total of every member against maxUnpackedBytes; a larger honest archive passes with it raised', async () => {
    const store = new ModelStore(join(home, 'models'));
    const saved = await store.save({
      name: 'zeros',
      files: { a: new Uint8Array(3 << 20), b: new Uint8Array(3 << 20) },
    });
    const archive = join(home, 'zeros.tar.gz');
    await exportEntry(store, saved.tag, archive);
    const target = new ModelStore(join(home, 'target'));
    // Each member is under 4 MiB, their sum is not.
    await expect(importEntry(target, archive, { maxUnpackedBytes: 4 << 20 })).rejects.toThrow(
      /unpacks to more than/,
    );
    expect(await readdir(join(home, 'target', '.staging')).catch(() => [])).toEqual([]);
    expect((await importEntry(target, archive, { maxUnpackedBytes: 8 << 20 })).tag).toBe(saved.tag);
  });
});
