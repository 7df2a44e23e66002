import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { truncateForMessage } from '@tiffin/core';

/** A request named a LoRA file outside every allowed root, or one that does not exist. */
export class LoraPathError extends Error {}

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
      if (this.roots.some((root) => inside(root, real))) {
        if (!(await stat(real)).isFile())
          throw new LoraPathError(`lora_weights '${truncateForMessage(name)}' is not a file`);
        return real;
      }
      throw new LoraPathError(
        `lora_weights '${truncateForMessage(name)}' resolves outside the allowed LoRA directories`,
      );
    }
    if (candidates.every((c) => !this.roots.some((root) => inside(root, resolve(c))))) {
      throw new LoraPathError(
        `lora_weights '${truncateForMessage(name)}' resolves outside the allowed LoRA directories`,
      );
    }
    throw new LoraPathError(
      `lora_weights '${truncateForMessage(name)}' was not found in the LoRA directories`,
    );
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}
