import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  applySignatureOverrides,
  defaultInstances,
  InvalidArgument,
  type LoadedModel,
  type LoadFrameworkModelOptions,
  type ModelSignature,
  ModelStore,
  RunnerPool,
  readFrameworkMetadata,
} from '@tiffin/core/internal';
import { inspectOnnx } from './inspect.js';
import { isOnnxPath, locateOnnx } from './model-file.js';
import type { OnnxRunnerInit } from './runtime/session-runner.js';
import { MODULE } from './save-model.js';

/** A loaded ONNX model: `run` by tensor name, on `instances` worker threads. */
export type OnnxModel = LoadedModel;

export type LoadOnnxModelOptions = LoadFrameworkModelOptions;

/** The worker module each instance runs (its .ts source in tests, the bundled .js once built). */
function workerModule(): URL {
  return new URL(
    import.meta.url.endsWith('.ts') ? './runner-worker.ts' : './runner-worker.js',
    import.meta.url,
  );
}

interface Resolved {
  name: string;
  tag: string | undefined;
  path: string;
  signature: ModelSignature;
  classes: readonly string[] | undefined;
  metadata: Record<string, unknown>;
}

async function resolveModel(tagOrPath: string, options: LoadOnnxModelOptions): Promise<Resolved> {
  if (await isOnnxPath(tagOrPath)) {
    const located = await locateOnnx(tagOrPath);
    const { signature } = await inspectOnnx(located.file, options.signatures);
    return {
      name: located.name,
      tag: undefined,
      path: located.file,
      signature,
      classes: undefined,
      metadata: {},
    };
  }
  const stored = await (options.store ?? new ModelStore()).get(tagOrPath);
  const meta = readFrameworkMetadata(stored, MODULE);
  return {
    name: stored.manifest.name,
    tag: stored.tag,
    path: join(stored.filesPath, meta.file),
    signature: applySignatureOverrides(meta.signature, options.signatures),
    classes: meta.classes,
    metadata: meta.user ?? {},
  };
}

/**
 * Load an ONNX model from the store (`name:latest`, `name:version`) or from a `.onnx` file, and start its
 * runner instances: `instances` worker threads (default: one per core, at most 4), each with its own session of
 * `threads` intra-op threads (default: the cores shared among the instances) on `executionProviders` (default
 * `cpu`; e.g. `['cuda', 'cpu']` where the CUDA provider is installed).
 */
export async function loadModel(tagOrPath: string, options: LoadOnnxModelOptions = {}): Promise<OnnxModel> {
  const model = await resolveModel(tagOrPath, options);
  const instances = options.instances ?? defaultInstances();
  const threads = options.threads ?? Math.max(1, Math.floor(availableParallelism() / instances));
  if (!Number.isInteger(threads) || threads < 1)
    throw new InvalidArgument(`threads must be a positive integer, got ${String(threads)}`);
  const init: OnnxRunnerInit = {
    path: model.path,
    executionProviders: options.executionProviders ? [...options.executionProviders] : undefined,
    threads,
    outputs: model.signature.outputs.map((t) => t.name),
  };
  const pool = await RunnerPool.start({
    model: model.name,
    workerModule: workerModule(),
    init,
    instances,
    transferInputs: options.transferInputs,
  });
  return {
    name: model.name,
    tag: model.tag,
    module: MODULE,
    signature: model.signature,
    classes: model.classes,
    metadata: model.metadata,
    instances: pool.instances,
    run: (inputs) => pool.run(inputs),
    close: () => pool.close(),
  };
}
