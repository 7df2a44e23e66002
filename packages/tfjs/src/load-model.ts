import { availableParallelism } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
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
import { checkBackendNames } from './backend.js';
import { inspectTfjs } from './inspect.js';
import { isTfjsPath } from './model-path.js';
import type { TfjsRunnerInit } from './runner.js';
import { MODULE } from './save-model.js';

/** A loaded TensorFlow.js model: `run` by tensor name, on `instances` worker threads. */
export type TfjsModel = LoadedModel;

export type LoadTfjsModelOptions = LoadFrameworkModelOptions;

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

/** A folder's model is named after the folder; `emotion.json` after its file. */
function nameOfPath(modelJson: string): string {
  const file = basename(modelJson, extname(modelJson));
  return file === 'model' ? basename(dirname(modelJson)) : file;
}

async function resolveModel(tagOrPath: string, options: LoadTfjsModelOptions): Promise<Resolved> {
  if (await isTfjsPath(tagOrPath)) {
    const { files, signature } = await inspectTfjs(tagOrPath, options.signatures);
    return {
      name: nameOfPath(files.modelJson),
      tag: undefined,
      path: files.modelJson,
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
 * Load a TensorFlow.js model from the store (`name:latest`) or a model folder / model.json, and start its runner
 * instances: `instances` worker threads (default: one per core, at most 4), each with its own tfjs backend, the
 * first of `executionProviders` that loads (default `tensorflow-gpu`, `tensorflow`, `wasm`, `cpu`: the native
 * ones when `@tensorflow/tfjs-node(-gpu)` is installed with its addon).
 */
export async function loadModel(tagOrPath: string, options: LoadTfjsModelOptions = {}): Promise<TfjsModel> {
  const backends = checkBackendNames(options.executionProviders);
  const model = await resolveModel(tagOrPath, options);
  const instances = options.instances ?? defaultInstances();
  const threads = options.threads ?? Math.max(1, Math.floor(availableParallelism() / instances));
  if (!Number.isInteger(threads) || threads < 1)
    throw new InvalidArgument(`threads must be a positive integer, got ${String(threads)}`);
  const init: TfjsRunnerInit = { path: model.path, backends, threads };
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
