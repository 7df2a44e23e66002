import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { BadInput } from '@tiffin/core';
import { isInside, truncateForMessage } from '@tiffin/core/internal';

/** A request named a LoRA file outside every allowed root, or one that does not exist (400). */
export class LoraPathError extends BadInput {
  static override readonly code: string = 'LORA_PATH';
}

/**
 * The folders per-request LoRA files may come from: the package's LoRA dir, the folder of
 * `--lora-weights`, and `$TIFFIN_LORA_DIR`. A name resolves inside a root; anything that ends up outside
 * every root after resolving `..` and symlinks is refused, so a request can never read arbitrary files.
 */
export class LoraRoots {
  private constructor(private readonly roots: readonly string[]) {}

  /** Roots that do not exist are dropped; each kept root is stored as its real path. */
  static async create(candidates: ReadonlyArray<string | undefined>): Promise<LoraRoots> {
    const roots: string[] = [];
    for (const candidate of candidates) {
      if (!candidate) continue;
      try {
        const real = await realpath(candidate);
        if ((await stat(real)).isDirectory() && !roots.includes(real)) roots.push(real);
      } catch {
        // A configured root that does not exist holds no LoRA files.
      }
    }
    return new LoraRoots(roots);
  }

  get directories(): readonly string[] {
    return this.roots;
  }

  /**
   * The `.safetensors` files of every root (sub-folders to depth 4, at most 1000),
   * by the name a request gives; a name in two roots is listed once (the first root is the one used).
   */
  async list(): Promise<LoraListing[]> {
    const found = new Map<string, LoraListing>();
    const walk = async (root: string, dir: string, depth: number): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        if (found.size >= LIST_MAX) return;
        const path = join(dir, entry.name);
        if (entry.isDirectory() && depth < LIST_DEPTH) await walk(root, path, depth + 1);
        else if (entry.isFile() && entry.name.endsWith('.safetensors')) {
          const name = relative(root, path).split(sep).join('/');
          if (!found.has(name)) found.set(name, { name, bytes: (await stat(path)).size });
        }
      }
    };
    for (const root of this.roots) await walk(root, root, 0);
    return [...found.values()];
  }

  /** The real path of the named LoRA file, inside one of the roots. */
  async resolve(name: string): Promise<string> {
    if (!name || name.includes('\0')) throw new LoraPathError('lora_weights must be a non-empty file name');
    if (this.roots.length === 0) {
      throw new LoraPathError('lora_weights is not available: the server has no LoRA directory configured');
    }
    const candidates = isAbsolute(name) ? [name] : this.roots.map((root) => resolve(root, name));
    for (const candidate of candidates) {
      let real: string;
      try {
        real = await realpath(candidate);
      } catch {
        continue;
      }
      if (this.roots.some((root) => isInside(root, real))) {
        if (!(await stat(real)).isFile())
          throw new LoraPathError(`lora_weights '${truncateForMessage(name)}' is not a file`);
        return real;
      }
      throw new LoraPathError(
        `lora_weights '${truncateForMessage(name)}' resolves outside the allowed LoRA directories`,
      );
    }
    if (candidates.every((c) => !this.roots.some((root) => isInside(root, resolve(c))))) {
      throw new LoraPathError(
        `lora_weights '${truncateForMessage(name)}' resolves outside the allowed LoRA directories`,
      );
    }
    throw new LoraPathError(
      `lora_weights '${truncateForMessage(name)}' was not found in the LoRA directories`,
    );
  }
}

/** One LoRA file a request may name, as `GET /loras` lists it (no server paths). */
export interface LoraListing {
  /** The name to pass in `lora_weights` (relative to its LoRA directory, `/`-separated). */
  name: string;
  bytes: number;
}

/** How deep `list()` looks into sub-folders, and how many files it reports at most. */
const LIST_DEPTH = 4;
const LIST_MAX = 1000;
