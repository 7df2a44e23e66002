import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError } from '@tiffin/core/internal';

/** onnxruntime-node, loaded on first use (its native library is 30 MB; loading it only when a model runs keeps imports cheap). */
export type OrtModule = typeof import('onnxruntime-node');

let ortModule: Promise<OrtModule> | null = null;

export function loadOrt(): Promise<OrtModule> {
  ortModule ??= import('onnxruntime-node').then(
    (m) => ((m as { default?: OrtModule }).default ?? m) as OrtModule,
  );
  return ortModule;
}

/** Execution-provider and threading choices for an ONNX Runtime session. */
export interface OnnxRuntimeOptions {
  /**
   * Execution providers by name, in preference order (`cuda`, `tensorrt`, `dml`, `coreml`, ...);
   * `cpu` is always appended as the fallback. Default: env `TIFFIN_ORT_PROVIDERS` (comma-separated), else `cpu`.
   */
  executionProviders?: readonly string[];
  /** CPU intra-op threads. Default: env `TIFFIN_ORT_THREADS`, else every core. */
  intraOpThreads?: number;
}

/**
 * Execution providers an onnxruntime-node build can have on some platform (onnxruntime-common's provider names
 * minus the browser/mobile ones). Which of them this machine's build has is `ort.listSupportedBackends()`.
 */
export const ORT_PROVIDER_NAMES = ['cpu', 'cuda', 'tensorrt', 'dml', 'coreml', 'webgpu', 'qnn'] as const;

/**
 * A comma-separated provider list from a flag or env variable (`cuda,cpu`), in preference order: names are
 * case-insensitive; empty entries, repeats and names onnxruntime-node does not have anywhere are errors
 * ({@link ConfigError}, prefixed with `origin` when given, e.g. `TIFFIN_ORT_PROVIDERS`).
 */
export function parseOrtProviders(value: string, origin?: string): string[] {
  const fail = (detail: string) => new ConfigError(origin ? `${origin}: ${detail}` : detail);
  const names = value.split(',').map((s) => s.trim().toLowerCase());
  const known = ORT_PROVIDER_NAMES as readonly string[];
  if (names.some((n) => n === ''))
    throw fail(`expected provider names separated by commas, e.g. cuda,cpu; got ${JSON.stringify(value)}`);
  for (const name of names)
    if (!known.includes(name))
      throw fail(
        `unknown execution provider ${JSON.stringify(name)} (onnxruntime-node providers: ${known.join(', ')})`,
      );
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated) throw fail(`execution provider ${repeated} is named twice`);
  return names;
}

/** An intra-op thread count from a flag or env variable: a positive integer (ConfigError otherwise). */
export function parseOrtThreads(value: string, origin?: string): number {
  const n = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    const detail = `expected a positive integer number of threads, got ${JSON.stringify(value)}`;
    throw new ConfigError(origin ? `${origin}: ${detail}` : detail);
  }
  return n;
}

export interface ResolvedRuntime {
  providers: string[];
  threads: number;
  /** One line per provider skipped, with why. */
  skipped: string[];
}

/**
 * Which of the requested providers this onnxruntime-node build has. The npm package ships the
 * CPU provider; CUDA/TensorRT binaries arrive only through its install script (kept off here,
 * see the README for the install command), so a named provider may be absent.
 */
export async function resolveRuntime(options: OnnxRuntimeOptions = {}): Promise<ResolvedRuntime> {
  const ort = await loadOrt();
  const envProviders = process.env.TIFFIN_ORT_PROVIDERS;
  const requested = (
    options.executionProviders ??
    (envProviders ? parseOrtProviders(envProviders, 'TIFFIN_ORT_PROVIDERS') : ['cpu'])
  ).map((s) => s.toLowerCase());
  const supported = new Set(ort.listSupportedBackends().map((b) => b.name.toLowerCase()));
  const providers: string[] = [];
  const skipped: string[] = [];
  const backends = new Map(ort.listSupportedBackends().map((b) => [b.name.toLowerCase(), b.bundled]));
  for (const name of requested) {
    if (name === 'cpu') continue;
    const bundled = backends.get(name);
    if (bundled === undefined)
      skipped.push(
        `${name}: onnxruntime-node has no ${name} provider (it has: ${[...supported].join(', ')})`,
      );
    else if (!bundled && !providerLibraryPresent(name))
      skipped.push(
        `${name}: its provider library is not installed (onnxruntime-node's install script, kept off, downloads it: ${GPU_INSTALL_COMMAND})`,
      );
    else providers.push(name);
  }
  providers.push('cpu');
  const envThreads = process.env.TIFFIN_ORT_THREADS;
  const threads =
    options.intraOpThreads ??
    (envThreads ? parseOrtThreads(envThreads, 'TIFFIN_ORT_THREADS') : availableParallelism());
  if (!Number.isInteger(threads) || threads < 1)
    throw new ConfigError(`intra-op threads must be a positive integer, got ${threads}`);
  return { providers, threads, skipped };
}

/** How to add the CUDA/TensorRT providers to an installed onnxruntime-node (Linux x64; needs CUDA 12 + cuDNN 9). */
export const GPU_INSTALL_COMMAND =
  'ONNXRUNTIME_NODE_INSTALL=cuda12 node "$(dirname "$(node -p "require.resolve(\'onnxruntime-node/package.json\')")")/script/install.js"';

/** Providers that are not bundled ship as `libonnxruntime_providers_<name>.so` beside the binding. */
function providerLibraryPresent(name: string): boolean {
  try {
    const root = dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
    const ext = process.platform === 'win32' ? 'dll' : process.platform === 'darwin' ? 'dylib' : 'so';
    const file = `${process.platform === 'win32' ? '' : 'lib'}onnxruntime_providers_${name}.${ext}`;
    return existsSync(join(root, 'bin', 'napi-v6', process.platform, process.arch, file));
  } catch {
    return false;
  }
}
