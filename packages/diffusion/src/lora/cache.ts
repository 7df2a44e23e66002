import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readLoraFile } from './parse.js';
import type { LoraFile } from './types.js';

/**
 * LRU cache of parsed LoRA files keyed by absolute path, revalidated by mtime and size so an edited
 * file is re-read. Parsed files are read-only and independent of the base model, so one entry can
 * serve every request that names the file.
 */
export class LoraCache {
  private readonly entries = new Map<string, { mtimeMs: number; size: number; file: LoraFile }>();

  constructor(
    readonly maxEntries = 4,
    private readonly read: (path: string) => LoraFile = readLoraFile,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new Error('LoraCache: maxEntries must be ≥ 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The parsed file at `path`, from the cache when the file has not changed. */
  get(path: string): LoraFile {
    const key = resolve(path);
    const st = statSync(key);
    const hit = this.entries.get(key);
    this.entries.delete(key);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) {
      this.entries.set(key, hit);
      return hit.file;
    }
    const file = this.read(key);
    this.entries.set(key, { mtimeMs: st.mtimeMs, size: st.size, file });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return file;
  }

  clear(): void {
    this.entries.clear();
  }
}
