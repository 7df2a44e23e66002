import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotFound } from '../../src/errors/index.js';
import { CorruptedStoreEntry, humanSize, ModelStore, StoreConflict } from '../../src/store/index.js';

let home: string;
let previousHome: string | undefined;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'tiffin-store-'));
  previousHome = process.env.TIFFIN_HOME;
  process.env.TIFFIN_HOME = home;
  delete process.env.TIFFIN_MODELS_DIR;
});

afterEach(async () => {
  if (previousHome === undefined) delete process.env.TIFFIN_HOME;
  else process.env.TIFFIN_HOME = previousHome;
  await rm(home, { recursive: true, force: true });
});

describe('ModelStore', () => {
  it('saves in-memory files under $TIFFIN_HOME/models with a YAML manifest and a content-hash version', async () => {
    const store = new ModelStore();
    const saved = await store.save({
      name: 'iris',
      files: { 'weights.bin': new Uint8Array([1, 2, 3]), 'config/params.json': '{"k":1}' },
      module: '@tiffin/example',
      labels: { owner: 'ml' },
      metadata: { accuracy: 0.97 },
    });
    expect(saved.path).toBe(join(home, 'models', 'iris', saved.manifest.version));
    expect(saved.manifest.version).toMatch(/^[0-9a-f]{16}$/);
    expect(saved.manifest).toMatchObject({
      name: 'iris',
      tag: `iris:${saved.manifest.version}`,
      module: '@tiffin/example',
      size: 10,
      labels: { owner: 'ml' },
      metadata: { accuracy: 0.97 },
    });
    expect(saved.manifest.files.map((f) => f.path)).toEqual(['config/params.json', 'weights.bin']);
    expect(await readFile(join(saved.filesPath, 'config/params.json'), 'utf8')).toBe('{"k":1}');
    const yaml = await readFile(join(saved.path, 'manifest.yaml'), 'utf8');
    expect(yaml).toContain('module: "@tiffin/example"');
    expect(yaml).toContain('creationTime:');
    // Same content → same version, and saving again is a no-op returning the existing entry.
    const again = await store.save({
      name: 'iris',
      files: { 'weights.bin': new Uint8Array([1, 2, 3]), 'config/params.json': '{"k":1}' },
      module: '@tiffin/example',
      labels: { owner: 'ml' },
      metadata: { accuracy: 0.97 },
    });
    expect(again.manifest.version).toBe(saved.manifest.version);
    expect(again.manifest.creationTime).toBe(saved.manifest.creationTime);
    expect(await store.list()).toHaveLength(1);
  });

  it('saves from a folder and from file paths', async () => {
    const src = join(home, 'src');
    await mkdir(join(src, 'sub'), { recursive: true });
    await writeFile(join(src, 'a.txt'), 'A');
    await writeFile(join(src, 'sub', 'b.txt'), 'BB');
    const store = new ModelStore();
    const fromDir = await store.save({ name: 'folder-model', dir: src });
    expect(fromDir.manifest.files.map((f) => f.path)).toEqual(['a.txt', 'sub/b.txt']);
    expect(fromDir.manifest.size).toBe(3);
    const fromPaths = await store.save({ name: 'file-model', paths: [join(src, 'sub', 'b.txt')] });
    expect(fromPaths.manifest.files.map((f) => f.path)).toEqual(['b.txt']);
    await expect(store.save({ name: 'nothing' })).rejects.toThrow(/Nothing to save/);
    await expect(store.save({ name: 'x', files: { '../escape': 'no' } })).rejects.toThrow(
      /leaves the model folder/,
    );
    await expect(store.save({ name: 'Bad Name', files: { a: '1' } })).rejects.toThrow(/Invalid name/);
  });

  it('lists newest first, resolves name:latest, gets and deletes', async () => {
    const store = new ModelStore();
    const v1 = await store.save({ name: 'clf', files: { w: '1' }, version: 'v1' });
    await new Promise((r) => setTimeout(r, 5));
    const v2 = await store.save({ name: 'clf', files: { w: '2' }, version: 'v2' });
    await store.save({ name: 'another', files: { w: '3' } });
    const listed = await store.list();
    expect(listed.map((e) => e.tag)).toEqual([expect.stringMatching(/^another:/), 'clf:v2', 'clf:v1']);
    expect((await store.get('clf:latest')).tag).toBe(v2.tag);
    expect((await store.get('clf')).tag).toBe(v2.tag);
    expect((await store.get('clf:v1')).manifest.files[0]?.size).toBe(1);
    expect(await store.delete('clf:latest')).toBe('clf:v2');
    expect((await store.get('clf:latest')).tag).toBe(v1.tag);
    await store.delete('clf:v1');
    await expect(store.get('clf')).rejects.toBeInstanceOf(NotFound);
    await expect(store.get('clf:v1')).rejects.toThrow(/Model 'clf:v1' not found/);
    await expect(store.delete('clf:v1')).rejects.toBeInstanceOf(NotFound);
    expect((await store.list()).map((e) => e.manifest.name)).toEqual(['another']);
  });

  it('refuses a different model under an existing explicit version', async () => {
    const store = new ModelStore();
    await store.save({ name: 'fixed', files: { w: '1' }, version: '1.0' });
    await expect(
      store.save({ name: 'fixed', files: { w: 'changed' }, version: '1.0' }),
    ).rejects.toBeInstanceOf(StoreConflict);
    expect(await readFile(join((await store.get('fixed:1.0')).filesPath, 'w'), 'utf8')).toBe('1');
    await expect(store.save({ name: 'fixed', files: { w: '1' }, version: 'latest' })).rejects.toThrow(
      /not a storable version/,
    );
  });

  it('keeps concurrent saves whole: each entry appears complete, nothing is left in staging', async () => {
    const store = new ModelStore();
    const big = new Uint8Array(256 * 1024).fill(7);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store.save({ name: 'concurrent', files: { 'w.bin': big, 'id.txt': String(i % 4) } }),
      ),
    );
    const versions = new Set(results.map((r) => r.manifest.version));
    expect(versions.size).toBe(4); // identical content collapses onto one entry
    const listed = await store.list('concurrent');
    expect(listed).toHaveLength(4);
    for (const entry of listed) expect(entry.manifest.size).toBe(big.length + 1);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(join(home, 'models', '.staging'))).toEqual([]);
  });

  it('reports a corrupted manifest clearly, and can still delete that version', async () => {
    const store = new ModelStore();
    const saved = await store.save({ name: 'broken', files: { w: '1' }, version: 'v1' });
    await writeFile(join(saved.path, 'manifest.yaml'), 'name: [unclosed');
    await expect(store.get('broken:v1')).rejects.toBeInstanceOf(CorruptedStoreEntry);
    await expect(store.list()).rejects.toThrow(/manifest\.yaml is not valid YAML/);
    await writeFile(join(saved.path, 'manifest.yaml'), 'name: broken\nversion: v1\n');
    await expect(store.get('broken:v1')).rejects.toThrow(
      /field 'tag' must be a non-empty string; delete the entry/,
    );
    expect(await store.delete('broken:v1')).toBe('broken:v1');
    expect(await store.list()).toEqual([]);
  });

  it('follows TIFFIN_MODELS_DIR when set', async () => {
    process.env.TIFFIN_MODELS_DIR = join(home, 'bundled');
    try {
      const saved = await new ModelStore().save({ name: 'm', files: { a: 'b' } });
      expect(saved.path.startsWith(join(home, 'bundled', 'm'))).toBe(true);
    } finally {
      delete process.env.TIFFIN_MODELS_DIR;
    }
  });
});

describe('humanSize', () => {
  it('uses binary units', () => {
    expect(humanSize(512)).toBe('512 B');
    expect(humanSize(1536)).toBe('1.50 KiB');
    expect(humanSize(5 * 1024 * 1024)).toBe('5.00 MiB');
  });
});
