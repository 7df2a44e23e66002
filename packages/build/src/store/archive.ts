import { createReadStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  type BaseManifest,
  type EntryStore,
  InvalidArgument,
  NotFound,
  type StoreEntry,
} from '@tiffin/core/internal';
import { create as createTar, extract as extractTar, Parser } from 'tar';

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

export interface ImportOptions {
  /**
   * Most bytes the archive's members may hold once unpacked; default `defaultUnpackedLimit(archive size)`.
   * Checked from the members' headers before anything is written.
   */
  maxUnpackedBytes?: number;
}

/** Most members an archive may hold: a store entry has a handful of files, not a file system's worth. */
export const MAX_ARCHIVE_MEMBERS = 10_000;

/**
 * The unpacked size an archive of `archiveBytes` may reach by default: 100 times its size, at least 1 GiB.
 * Model weights hardly compress (about 1.1×), so only a crafted archive (a few MB of zeros that unpack to
 * gigabytes) reaches it; a larger honest archive is let through with `maxUnpackedBytes`.
 */
export function defaultUnpackedLimit(archiveBytes: number): number {
  return Math.max(2 ** 30, 100 * archiveBytes);
}

/**
 * Read only the members' headers (their bodies are skipped, nothing is written) and refuse the archive as soon
 * as their sizes add up past `limit` or there are too many of them: a small archive that unpacks to gigabytes
 * is refused within the first header that says so, not after filling the disk.
 */
function checkUnpackedSize(source: string, limit: number): Promise<void> {
  return new Promise<void>((resolvePromise, reject) => {
    const input = createReadStream(source);
    let total = 0;
    let members = 0;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      input.destroy();
      reject(err);
    };
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry) => {
        total += entry.size ?? 0;
        members += 1;
        if (total > limit)
          fail(
            new InvalidArgument(
              `Archive ${source} unpacks to more than ${limit} bytes (maxUnpackedBytes); refused before extracting`,
            ),
          );
        else if (members > MAX_ARCHIVE_MEMBERS)
          fail(
            new InvalidArgument(
              `Archive ${source} holds more than ${MAX_ARCHIVE_MEMBERS} members; refused before extracting`,
            ),
          );
        entry.resume();
      },
    });
    parser.on('error', fail);
    parser.on('end', () => {
      if (settled) return;
      settled = true;
      resolvePromise();
    });
    input.on('error', fail);
    input.pipe(parser);
  });
}

/**
 * Read an archive written by `exportEntry` and add it to `store` (atomically, after checking its files). Its
 * unpacked size is checked from the headers first (`ImportOptions.maxUnpackedBytes`).
 */
export async function importEntry<E>(
  store: AdoptingStore<E>,
  archivePath: string,
  options: ImportOptions = {},
): Promise<E> {
  const source = resolve(archivePath);
  const info = await stat(source).catch(() => null);
  if (!info?.isFile()) throw new NotFound(`Archive ${source} not found`);
  const limit = options.maxUnpackedBytes ?? defaultUnpackedLimit(info.size);
  if (!(Number.isSafeInteger(limit) && limit >= 0))
    throw new InvalidArgument(`maxUnpackedBytes must be a non-negative integer, got ${String(limit)}`);
  await checkUnpackedSize(source, limit);
  // tar refuses absolute paths and '..' entries by default, so an archive cannot write outside staging.
  return store.adopt(source, (staging) => extractTar({ file: source, cwd: staging, strict: true }));
}
