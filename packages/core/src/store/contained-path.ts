import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { InvalidArgument } from '../errors/index.js';

/*
 * Paths that come from outside (a hub's file list, an archive's entries, a manifest's file names, a request's
 * file name) are joined under a destination only through these: a name that would land outside it is
 * refused, however it is spelled (`..` segments, an absolute path, a Windows drive or backslashes, a NUL) or
 * reached (a symlink inside the destination that points out).
 */

/** Whether `path` (already resolved) is `root` itself or lies under it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Why `name` is not a plain relative path of `/`-separated segments (null when it is one): empty, absolute,
 * a drive letter, a backslash, a NUL, or a `.`/`..`/empty segment.
 */
export function unsafeRelativePath(name: string): string | null {
  if (name === '') return 'is empty';
  if (name.includes('\0')) return 'contains a NUL byte';
  if (name.includes('\\')) return 'contains a backslash';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'is absolute';
  if (name.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    return "has an empty, '.' or '..' segment";
  }
  return null;
}

/**
 * `name` joined under `root`, refused (InvalidArgument, naming `what`) unless it is a plain relative path
 * that resolves inside `root`.
 */
export function containedPath(root: string, name: string, what: string): string {
  const why = unsafeRelativePath(name);
  const target = join(root, name);
  if (why !== null || !isInside(root, target)) {
    throw new InvalidArgument(
      `${what} '${name.slice(0, 200)}' ${why ?? 'resolves outside its folder'}; refused`,
    );
  }
  return target;
}

/**
 * Refuse `path` when the deepest part of it that exists resolves (through symlinks) outside `root`'s real
 * location: a symlink planted inside the destination must not carry a write out of it.
 */
export async function assertNoSymlinkEscape(root: string, path: string, what: string): Promise<void> {
  const realRoot = await realpath(root);
  let existing = resolve(path);
  for (;;) {
    try {
      const real = await realpath(existing);
      if (!isInside(realRoot, real)) {
        throw new InvalidArgument(`${what} leads outside its folder through a symbolic link; refused`);
      }
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      const parent = dirname(existing);
      if (parent === existing) return;
      existing = parent;
    }
  }
}
