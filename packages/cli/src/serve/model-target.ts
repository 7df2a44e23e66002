import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { CLIException, type FrameworkModule, MissingDependencyException } from '@tiffin/core/internal';

/** The framework modules Tiffin knows, by the store's Module column, with the package that provides each. */
export const FRAMEWORK_PACKAGES: Readonly<Record<string, string>> = {
  onnx: '@tiffin/onnx',
  tfjs: '@tiffin/tfjs',
};

/** A model to serve with zero code: which framework loads it, and the path or store tag to give it. */
export interface ModelTarget {
  framework: FrameworkModule;
  /** A file or folder path, or a store tag (`name:version`). */
  source: string;
}

/** The framework module of `module` (`onnx`, `tfjs`), imported on first use; not installed → the package to add. */
export async function frameworkModule(module: string): Promise<FrameworkModule> {
  const pkg = FRAMEWORK_PACKAGES[module];
  if (!pkg)
    throw new CLIException(
      `Unknown model module '${module}' (known: ${Object.keys(FRAMEWORK_PACKAGES).join(', ')})`,
    );
  let mod: { framework?: FrameworkModule };
  try {
    mod = (await import(pkg)) as { framework?: FrameworkModule };
  } catch (err) {
    // @tiffin/tfjs (with TF.js) is an optional peer of the CLI: an ONNX user never installs it.
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND')
      throw MissingDependencyException.forPackage(pkg, `Serving ${module} models`, err);
    throw err;
  }
  if (!mod.framework) throw new CLIException(`${pkg} exports no framework module`);
  return mod.framework;
}

/**
 * The module a model path needs: `.onnx` files, TF.js `model.json` files and folders by name; another `.json`
 * file (converters also write `emotion.json`) when its start shows a TF.js model.
 */
async function moduleOfPath(path: string): Promise<string | null> {
  const info = await stat(path).catch(() => null);
  if (!info) return null;
  if (info.isFile()) {
    if (path.toLowerCase().endsWith('.onnx')) return 'onnx';
    if (basename(path) === 'model.json') return 'tfjs';
    if (!path.toLowerCase().endsWith('.json')) return null;
    return (await (await frameworkModule('tfjs')).recognizes(path)) ? 'tfjs' : null;
  }
  if (await stat(join(path, 'model.json')).catch(() => null)) return 'tfjs';
  const onnx = await import('@tiffin/onnx');
  return (await onnx.framework.recognizes(path)) ? 'onnx' : null;
}

/**
 * `tiffin serve <arg>` with a model instead of a service: a model file or folder (`model.onnx`, a TF.js
 * `model.json` folder), or a store tag prefixed with its module (`onnx:iris:latest`). Null when `arg` is none
 * of these (a service file or a package tag).
 */
export async function resolveModelTarget(arg: string): Promise<ModelTarget | null> {
  const prefixed = /^([a-z][a-z0-9]*):(.+)$/.exec(arg);
  if (prefixed && FRAMEWORK_PACKAGES[prefixed[1]!] !== undefined && !(await stat(arg).catch(() => null))) {
    return { framework: await frameworkModule(prefixed[1]!), source: prefixed[2]! };
  }
  const module = await moduleOfPath(arg);
  if (module) return { framework: await frameworkModule(module), source: arg };
  const why = await notAModel(arg);
  if (why) throw new CLIException(why);
  return null;
}

/** What TF.js converters write beside model.json: weight shards and (face-api.js style) weight manifests. */
const WEIGHTS_FILE = /(weights_manifest\.json|\.bin|-shard\d+(of\d+)?)$/i;

/**
 * Why a folder or a `.json` file that exists is not a model `tiffin serve` can take (no service file is either),
 * or null for any other path: weights without a model topology (a folder of face-api.js weight manifests, a
 * `*-weights_manifest.json`) say so, rather than "Service file not found".
 */
async function notAModel(path: string): Promise<string | null> {
  const info = await stat(path).catch(() => null);
  if (!info) return null;
  const takes = 'tiffin serve takes a .onnx file, a TF.js model.json (or its folder), or a service file';
  if (info.isDirectory()) {
    const names = await readdir(path).catch(() => [] as string[]);
    if (names.some((n) => WEIGHTS_FILE.test(n)))
      return `${path} has no model.json: this folder holds weights without a model topology (${names
        .filter((n) => WEIGHTS_FILE.test(n))
        .slice(0, 3)
        .join(
          ', ',
        )}). ${takes}; a model saved as weights only needs its topology (the model.json the converter writes) beside them.`;
    return `${path} is a folder with no model in it (no model.json, no .onnx file). ${takes}.`;
  }
  if (!path.toLowerCase().endsWith('.json')) return null;
  if (/weights_manifest\.json$/i.test(path))
    return `${path} is a TF.js weights manifest without a model topology (no modelTopology): serve the model.json the converter wrote beside the weights. ${takes}.`;
  return `${path} is a JSON file but not a TF.js model (no modelTopology, no "format": "graph-model" or "layers-model"). ${takes}.`;
}

/** A model's default name from its path: `iris.onnx` → `iris`; a TF.js `model.json` (or its folder) → the folder's name. */
export function modelNameOf(path: string): string {
  const full = resolve(path);
  if (basename(full) === 'model.json') return basename(dirname(full));
  return basename(full, extname(full));
}
