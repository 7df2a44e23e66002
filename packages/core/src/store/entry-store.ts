import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InvalidArgument, NotFound } from '../errors/index.js';
import { CorruptedStoreEntry, StoreConflict } from './errors.js';
import { listFiles } from './files.js';
import { type BaseManifest, MANIFEST_FILE } from './manifest.js';
import { assertValidName, assertValidVersion, formatTag, LATEST, parseTag } from './tag.js';

/** One stored entry: its manifest and the folder holding it. */
export interface StoreEntry<M extends BaseManifest> {
  readonly tag: string;
  readonly path: string;
  readonly manifest: M;
}

/** Folder names inside a store root that are not entries (staging area for atomic writes). */
const STAGING = '.staging';

/**
 * A folder of `<name>/<version>/` entries, each with a YAML manifest. Writes are atomic: an entry is
 * assembled in a staging folder on the same filesystem and renamed into place only when complete,
 * so readers never see half an entry and concurrent writers of the same tag cannot interleave.
 */
export abstract class EntryStore<M extends BaseManifest> {
  /** Lower-case noun for messages ("model", "package"). */
  protected abstract readonly kind: string;

  constructor(private readonly rootDir: () => string) {}

  get root(): string {
    return this.rootDir();
  }

  /** Parse and check one manifest file (throws CorruptedStoreEntry). */
  protected abstract readManifestFile(path: string): Promise<M>;

  entryPath(name: string, version: string): string {
    assertValidName(name);
    assertValidVersion(version);
    return join(this.root, name, version);
  }

  /** All entries (optionally of one name), newest first within a name, names sorted. */
  async list(name?: string): Promise<StoreEntry<M>[]> {
    const names = name === undefined ? await this.names() : [parseTag(name).name];
    const entries: StoreEntry<M>[] = [];
    for (const n of names) {
      for (const version of await childDirs(join(this.root, n))) {
        entries.push(await this.load(n, version));
      }
    }
    return entries.sort((a, b) =>
      a.manifest.name !== b.manifest.name
        ? a.manifest.name < b.manifest.name
          ? -1
          : 1
        : newestFirst(a.manifest, b.manifest),
    );
  }

  /** Look up `name:version` or `name:latest` (also plain `name`). */
  async get(tagText: string): Promise<StoreEntry<M>> {
    const tag = parseTag(tagText);
    if (tag.version === LATEST) {
      const [newest] = await this.list(tag.name);
      if (!newest) throw new NotFound(`No ${this.kind} named '${tag.name}' in ${this.root}`);
      return newest;
    }
    const path = this.entryPath(tag.name, tag.version);
    if (!(await isDir(path)))
      throw new NotFound(`${capitalize(this.kind)} '${formatTag(tag)}' not found in ${this.root}`);
    return this.load(tag.name, tag.version);
  }

  /** Remove an entry; returns its tag. An explicit version is removed even when its manifest is corrupted. */
  async delete(tagText: string): Promise<string> {
    const tag = parseTag(tagText);
    const version = tag.version === LATEST ? (await this.get(tagText)).manifest.version : tag.version;
    const path = this.entryPath(tag.name, version);
    if (!(await isDir(path)))
      throw new NotFound(`${capitalize(this.kind)} '${tag.name}:${version}' not found in ${this.root}`);
    // Move out of sight first (atomic), then delete at leisure.
    const trash = join(await this.stagingRoot(), `deleted-${randomBytes(6).toString('hex')}`);
    await rename(path, trash);
    await rm(trash, { recursive: true, force: true });
    await rmdir(join(this.root, tag.name)).catch(() => undefined); // only succeeds when no version is left
    return `${tag.name}:${version}`;
  }

  /**
   * The files an archive of `entry` holds, relative to `entry.path`: the manifest and the files it lists. Only
   * those: local additions (e.g. node_modules installed into a package) stay out. Archives are written by
   * `@tiffin/build` (`exportEntry`), so the serving core carries no archive library.
   */
  archiveMembers(entry: StoreEntry<M>): string[] {
    const prefix = this.contentFolder() === '' ? '' : `${this.contentFolder()}/`;
    return [MANIFEST_FILE, ...entry.manifest.files.map((f) => `${prefix}${f.path}`)];
  }

  /**
   * Add an entry whose files `unpack` writes into an empty staging folder (e.g. an archive's members): its
   * manifest is read and every file checked against it before it is added atomically. `source` names where
   * the files came from, for messages.
   */
  async adopt(source: string, unpack: (staging: string) => Promise<void>): Promise<StoreEntry<M>> {
    const staging = await this.stage();
    try {
      await unpack(staging);
      const manifest = await this.readManifestFile(join(staging, MANIFEST_FILE));
      await this.verifyFiles(staging, manifest, source);
      return await this.commit(staging, manifest);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  /** A fresh, empty staging folder inside the store root (same filesystem, so `commit` can rename). */
  protected async stage(): Promise<string> {
    return mkdtemp(join(await this.stagingRoot(), 'new-'));
  }

  /** The folder of an entry's own files inside its entry folder ('' = the entry folder itself). */
  protected contentFolder(): string {
    return '';
  }

  /**
   * Move a complete staging folder (manifest already written) to `<name>/<version>`. When that tag
   * already exists with the same files the existing entry is kept and returned (content-hash versions
   * make a repeated save a no-op); with different files it is a StoreConflict.
   */
  protected async commit(staging: string, manifest: M): Promise<StoreEntry<M>> {
    const target = this.entryPath(manifest.name, manifest.version);
    for (let attempt = 0; ; attempt += 1) {
      await mkdir(dirname(target), { recursive: true });
      try {
        await rename(staging, target);
        return { tag: manifest.tag, path: target, manifest };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // A concurrent delete may remove the (empty) name folder between mkdir and rename.
        if (code === 'ENOENT' && attempt < 3) continue;
        if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
        await rm(staging, { recursive: true, force: true });
        const existing = await this.load(manifest.name, manifest.version);
        if (sameFiles(existing.manifest, manifest)) return existing;
        throw new StoreConflict(
          `${capitalize(this.kind)} '${manifest.tag}' already exists with different content; delete it first or choose another version`,
        );
      }
    }
  }

  private async verifyFiles(dir: string, manifest: M, source: string): Promise<void> {
    const actual = await listFiles(join(dir, this.contentFolder()));
    const expected = manifest.files;
    const relevant = this.contentFolder() === '' ? actual.filter((f) => f.path !== MANIFEST_FILE) : actual;
    const key = (f: { path: string; sha256: string }) => `${f.path}\0${f.sha256}`;
    const have = new Set(relevant.map(key));
    const missing = expected.filter((f) => !have.has(key(f)));
    if (missing.length > 0 || relevant.length !== expected.length) {
      throw new CorruptedStoreEntry(
        `Archive ${source} does not match its manifest (${missing.length > 0 ? `missing or changed: ${missing.map((f) => f.path).join(', ')}` : 'unexpected extra files'})`,
      );
    }
  }

  private async load(name: string, version: string): Promise<StoreEntry<M>> {
    const path = join(this.root, name, version);
    const manifestPath = join(path, MANIFEST_FILE);
    const manifest = await this.readManifestFile(manifestPath);
    if (manifest.name !== name || manifest.version !== version) {
      throw new CorruptedStoreEntry(
        `Manifest ${manifestPath} names '${manifest.name}:${manifest.version}' but is stored as '${name}:${version}'; delete the entry and save it again`,
      );
    }
    return { tag: `${name}:${version}`, path, manifest };
  }

  private async names(): Promise<string[]> {
    return (await childDirs(this.root)).filter((n) => !n.startsWith('.')).sort();
  }

  private async stagingRoot(): Promise<string> {
    const dir = join(this.root, STAGING);
    await mkdir(dir, { recursive: true });
    return dir;
  }
}

export function ensureStorable(name: string, version: string | undefined): void {
  assertValidName(name);
  if (version !== undefined) {
    if (version === LATEST)
      throw new InvalidArgument(`'${LATEST}' is not a storable version; it always means the newest`);
    assertValidVersion(version);
  }
}

function newestFirst(a: BaseManifest, b: BaseManifest): number {
  const byTime = Date.parse(b.creationTime) - Date.parse(a.creationTime);
  return byTime !== 0 ? byTime : a.version < b.version ? 1 : a.version > b.version ? -1 : 0;
}

function sameFiles(a: BaseManifest, b: BaseManifest): boolean {
  return (
    a.files.length === b.files.length &&
    a.files.every((f, i) => f.path === b.files[i]?.path && f.sha256 === b.files[i]?.sha256)
  );
}

async function childDirs(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
      .map((d) => d.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
