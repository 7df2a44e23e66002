import { chmod, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * `chmod -R a+rX`: everyone may read every file and enter every folder below `dir` (and `dir` itself).
 * A package runs as a non-root user in its image, but store entries are made in mkdtemp folders (0700)
 * and model files keep whatever mode they were saved with; `COPY` keeps those modes.
 */
export async function makeReadableByAll(dir: string): Promise<void> {
  const readable = async (path: string, isDir: boolean) => {
    const { mode } = await stat(path);
    // Folders get read + search for all; files get read, and search only where someone could already execute.
    const add = isDir ? 0o555 : mode & 0o111 ? 0o555 : 0o444;
    if ((mode & add) !== add) await chmod(path, (mode & 0o7777) | add);
  };
  await readable(dir, true);
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isSymbolicLink()) continue;
    await readable(join(entry.parentPath, entry.name), entry.isDirectory());
  }
}
