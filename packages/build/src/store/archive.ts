import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { type BaseManifest, type EntryStore, NotFound, type StoreEntry } from '@tiffin/core/internal';
import { create as createTar, extract as extractTar } from 'tar';

/** A store that can add an entry from unpacked files (ModelStore answers a StoredModel, PackageStore a package). */
export interface AdoptingStore<E> {
  adopt(source: string, unpack: (staging: string) => Promise<void>): Promise<E>;
}

/** Write a store entry as a `.tar.gz` archive (its manifest plus the files the manifest lists). */
export async function exportEntry<M extends BaseManifest>(
  store: EntryStore<M>,
  tagText: string,
  archivePath: string,
): Promise<StoreEntry<M>> {
  const entry = await store.get(tagText);
  const target = resolve(archivePath);
  await mkdir(dirname(target), { recursive: true });
  await createTar({ gzip: true, portable: true, file: target, cwd: entry.path }, store.archiveMembers(entry));
  return entry;
}

/** Read an archive written by `exportEntry` and add it to `store` (atomically, after checking its files). */
export async function importEntry<E>(store: AdoptingStore<E>, archivePath: string): Promise<E> {
  const source = resolve(archivePath);
  if (!(await stat(source).catch(() => null))?.isFile()) throw new NotFound(`Archive ${source} not found`);
  // tar refuses absolute paths and '..' entries by default, so an archive cannot write outside staging.
  return store.adopt(source, (staging) => extractTar({ file: source, cwd: staging, strict: true }));
}
