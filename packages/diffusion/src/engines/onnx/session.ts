import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';

/** onnxruntime-node, loaded on first use (its native library is 30 MB; tfjs-only users never load it). */
export type OrtModule = typeof import('onnxruntime-node');

let ortModule: Promise<OrtModule> | null = null;

export function loadOrt(): Promise<OrtModule> {
  ortModule ??= import('onnxruntime-node').then(
    (m) => ((m as { default?: OrtModule }).default ?? m) as OrtModule,
  );
  return ortModule;
}

/** Execution-provider and threading choices for the onnxruntime engine. */
export interface OnnxRuntimeOptions {
  /**
   * Execution providers by name, in preference order (`cuda`, `tensorrt`, `dml`, `coreml`, ...);
   * `cpu` is always appended as the fallback. Default: env `TIFFIN_ORT_PROVIDERS` (comma-separated), else `cpu`.
   */
  executionProviders?: readonly string[];
  /** CPU intra-op threads. Default: env `TIFFIN_ORT_THREADS`, else every core. */
  intraOpThreads?: number;
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
  const requested = (
    options.executionProviders ??
    (process.env.TIFFIN_ORT_PROVIDERS ?? 'cpu')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
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
  const envThreads = Number(process.env.TIFFIN_ORT_THREADS);
  const threads =
    options.intraOpThreads ??
    (Number.isInteger(envThreads) && envThreads > 0 ? envThreads : availableParallelism());
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`intra-op threads must be a positive integer, got ${threads}`);
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

export function sessionOptions(runtime: ResolvedRuntime): InferenceSession.SessionOptions {
  return {
    executionProviders: runtime.providers,
    intraOpNumThreads: runtime.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Errors only: ORT warns once per weight that is also a graph input, which is the LoRA design.
    logSeverityLevel: 3,
  };
}
