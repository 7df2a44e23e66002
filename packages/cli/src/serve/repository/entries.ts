import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CLIException } from '@tiffin/core/internal';
import { type ModelConfig, readModelConfig } from './model-config.js';

/** A name a repository serves: a path segment as it stands, at most 64 characters (docs/model-repository.md). */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The file a Triton-layout model folder may hold beside its versions: Tiffin's own config (batching, outputs). */
export const CONFIG_FILE = 'tiffin-model.json';

/** One model of the repository folder, as found on disk. */
export interface RepositoryEntry {
  readonly name: string;
  /** The framework module that loads it (`onnx`, `tfjs`). */
  readonly module: string;
  /** The file or folder to load. */
  readonly source: string;
  /** The version folder it came from (Triton's layout), else ''. */
  readonly version: string;
  readonly config: ModelConfig;
  /** Sizes and modification times of its files: a different one is a changed model. */
  readonly fingerprint: string;
  /** Bytes of its files on disk: what residency counts it as. */
  readonly bytes: number;
}

/** What a scan of the folder found: the models, and the entries it could not take with the reason. */
export interface RepositoryScan {
  readonly entries: Map<string, RepositoryEntry>;
  readonly refused: Map<string, string>;
}

async function filesOf(path: string): Promise<Array<{ size: number; mtimeMs: number }>> {
  const info = await stat(path);
  if (info.isFile()) return [{ size: info.size, mtimeMs: info.mtimeMs }];
  const out: Array<{ size: number; mtimeMs: number }> = [];
  for (const name of (await readdir(path)).sort()) {
    const child = await stat(join(path, name)).catch(() => null);
    if (child?.isFile()) out.push({ size: child.size, mtimeMs: child.mtimeMs });
  }
  return out;
}

/** The highest numeric version folder of a Triton-layout model (`<name>/<version>/`), or null. */
async function latestVersion(folder: string): Promise<string | null> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const versions = names.filter((n) => /^[0-9]{1,18}$/.test(n)).sort((a, b) => Number(b) - Number(a));
  return versions[0] ?? null;
}

/** The model file or folder of one entry of the repository folder, with its module; null when none is there. */
async function locate(
  dir: string,
  entry: string,
): Promise<{ name: string; module: string; source: string; version: string; folder?: string } | null> {
  const path = join(dir, entry);
  const info = await stat(path).catch(() => null);
  if (!info) return null;
  if (info.isFile()) {
    if (entry.toLowerCase().endsWith('.onnx'))
      return { name: entry.slice(0, -5), module: 'onnx', source: path, version: '' };
    return null;
  }
  if (!info.isDirectory()) return null;
  if (await stat(join(path, 'model.json')).catch(() => null))
    return { name: entry, module: 'tfjs', source: path, version: '', folder: path };
  const version = await latestVersion(path);
  if (version === null) return null;
  const versioned = join(path, version);
  if (await stat(join(versioned, 'model.onnx')).catch(() => null))
    return { name: entry, module: 'onnx', source: join(versioned, 'model.onnx'), version, folder: path };
  if (await stat(join(versioned, 'model.json')).catch(() => null))
    return { name: entry, module: 'tfjs', source: versioned, version, folder: path };
  return null;
}

/**
 * The models of a repository folder (docs/model-repository.md): `<name>.onnx` files, TF.js folders
 * (`<name>/model.json`) and Triton's layout (`<name>/<version>/model.onnx` or `model.json`, the highest version
 * served, `<name>/tiffin-model.json` beside the versions). A name that is not one a repository serves, or a
 * broken config, is refused with the reason (the index lists it UNAVAILABLE).
 */
export async function scanRepository(dir: string): Promise<RepositoryScan> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    throw new CLIException(`Cannot read the model repository ${dir}: ${err.code ?? err.message}`);
  });
  const entries = new Map<string, RepositoryEntry>();
  const refused = new Map<string, string>();
  for (const entry of names.sort()) {
    if (entry.startsWith('.')) continue;
    const found = await locate(dir, entry);
    if (!found) continue;
    if (!MODEL_NAME.test(found.name)) {
      refused.set(
        found.name.slice(0, 64),
        'not a model name: 1-64 characters of A-Z, a-z, 0-9, ".", "_", "-"',
      );
      continue;
    }
    let config: ModelConfig = {};
    try {
      if (found.folder) config = await readModelConfig(join(found.folder, CONFIG_FILE));
    } catch (err) {
      refused.set(found.name, (err as Error).message);
      continue;
    }
    const files = await filesOf(found.source).catch(() => []);
    const configFiles = found.folder ? await filesOf(join(found.folder, CONFIG_FILE)).catch(() => []) : [];
    const all = [...files, ...configFiles];
    entries.set(found.name, {
      name: found.name,
      module: found.module,
      source: found.source,
      version: found.version,
      config,
      fingerprint: `${found.source}|${all.map((f) => `${f.size}:${f.mtimeMs}`).join(',')}`,
      bytes: files.reduce((sum, f) => sum + f.size, 0),
    });
  }
  return { entries, refused };
}

/** Whether a folder is a model repository: no model of its own, at least one model (or refused name) inside. */
export async function isRepository(dir: string): Promise<boolean> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) return false;
  if (await stat(join(dir, 'model.json')).catch(() => null)) return false;
  const { entries, refused } = await scanRepository(dir);
  return entries.size > 0 || refused.size > 0;
}
