import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cp, readdir, stat } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';

/** One file of a store entry, as listed in its manifest. */
export interface FileRecord {
  /** Path relative to the entry's content folder, with '/' separators. */
  path: string;
  size: number;
  sha256: string;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every regular file under `root`, sorted by path, with size and hash. Symlinks are refused (they would escape the store). */
export async function listFiles(root: string): Promise<FileRecord[]> {
  const records: FileRecord[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        const info = await stat(full);
        records.push({
          path: relative(root, full).split(sep).join(posix.sep),
          size: info.size,
          sha256: await sha256File(full),
        });
      } else {
        throw new Error(`Unsupported file type at ${full}: only regular files and folders can be stored`);
      }
    }
  }
  await walk(root);
  return records.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A stable content hash: the files (paths and bytes) plus any identity fields, as 16 hex characters. */
export function contentVersion(files: readonly FileRecord[], identity: unknown): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.path}\0${file.sha256}\n`);
  hash.update(stableStringify(identity));
  return hash.digest('hex').slice(0, 16);
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function totalSize(files: readonly FileRecord[]): number {
  return files.reduce((sum, f) => sum + f.size, 0);
}

export async function copyDir(from: string, to: string): Promise<void> {
  await cp(from, to, {
    recursive: true,
    errorOnExist: false,
    force: true,
    verbatimSymlinks: false,
    dereference: true,
  });
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `1536` → `1.50 KiB`. */
export function humanSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(2)} ${UNITS[unit]}`;
}
