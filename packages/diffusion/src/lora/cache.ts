import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { readLoraFile } from './parse.js';
import type { LoraFile } from './types.js';

/** Bytes a parsed LoRA file holds (its float32 arrays). */
export function loraFileBytes(file: LoraFile): number {
  let bytes = 0;
  for (const m of file.modules) bytes += m.down.data.byteLength + m.up.data.byteLength;
  return bytes;
}

/**
 * LRU cache of parsed LoRA files keyed by absolute path, revalidated by mtime and size so an edited
 * file is re-read. Parsed files are read-only and independent of the base model, so one entry can
 * serve every request that names the file. Bounded by entries and by bytes held (the most recent file
 * stays even when it alone is larger).
 */
export class LoraCache {
  private readonly entries = new Map<
    string,
    { mtimeMs: number; size: number; bytes: number; file: LoraFile }
  >();
  private heldBytes = 0;

  constructor(
    readonly maxEntries = 4,
    private readonly read: (path: string) => LoraFile = readLoraFile,
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new Error('LoraCache: maxEntries must be ≥ 1');
    if (!(maxBytes > 0)) throw new Error('LoraCache: maxBytes must be > 0');
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of the parsed files held. */
  get bytes(): number {
    return this.heldBytes;
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
    if (hit) this.heldBytes -= hit.bytes;
    const file = this.read(key);
    const bytes = loraFileBytes(file);
    this.entries.set(key, { mtimeMs: st.mtimeMs, size: st.size, bytes, file });
    this.heldBytes += bytes;
    while (this.entries.size > this.maxEntries || (this.heldBytes > this.maxBytes && this.entries.size > 1)) {
      const [oldest, entry] = this.entries.entries().next().value as [string, { bytes: number }];
      this.entries.delete(oldest);
      this.heldBytes -= entry.bytes;
    }
    return file;
  }

  clear(): void {
    this.entries.clear();
    this.heldBytes = 0;
  }
}
