import { availableParallelism } from 'node:os';
import { InvalidArgument } from '../errors/index.js';
import { checkEmptyDimensions } from '../signature/empty-dimensions.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import { applySignatureOverrides, type ModelSignature } from '../signature/signature.js';
import { checkInputNames } from '../signature/tensor-check.js';
import { assertNoSymlinkEscape, containedPath } from '../store/contained-path.js';
import { ModelStore } from '../store/model-store.js';
import type { LoadFrameworkModelOptions } from './framework.js';
import { readFrameworkMetadata } from './framework-store.js';
import type { LoadedModel, ModelRunner } from './runner.js';
import { defaultInstances, RunnerPool } from './runner-pool.js';

/** A model found on disk or in the store, before its runner threads start. */
export interface ResolvedModel {
  name: string;
  /** `name:version` when it came from the store. */
  tag: string | undefined;
  /** The model file (or model.json) to open. */
  path: string;
  signature: ModelSignature;
  classes: readonly string[] | undefined;
  metadata: Record<string, unknown>;
}

/** A store tag of `module`'s model: its file, stored signature (with load-time overrides), classes and metadata. */
export async function resolveStoredModel(
  tag: string,
  module: string,
  options: LoadFrameworkModelOptions,
): Promise<ResolvedModel> {
  const stored = await (options.store ?? new ModelStore()).get(tag);
  const meta = readFrameworkMetadata(stored, module);
  // The manifest may come from an imported archive: its model file must be one of the entry's own files.
  const what = `Model '${stored.tag}' file`;
  const path = containedPath(stored.filesPath, meta.file, what);
  await assertNoSymlinkEscape(stored.filesPath, path, what);
  return {
    name: stored.manifest.name,
    tag: stored.tag,
    path,
    signature: applySignatureOverrides(meta.signature, options.signatures),
    classes: meta.classes,
    metadata: meta.user ?? {},
  };
}

export interface StartModelOptions {
  module: string;
  model: ResolvedModel;
  /** The framework's worker module (see `RunnerPool`). */
  workerModule: URL;
  /** Each instance's start-up data, given the intra-op threads it may use. */
  init: (threads: number) => unknown;
  /**
   * Opens the runner in this thread from that start-up data (what the worker module does in its thread):
   * used when `instances` is 0.
   */
  openRunner: (init: unknown) => Promise<ModelRunner>;
  options: LoadFrameworkModelOptions;
}

/**
 * Start a resolved model's runner instances: `instances` worker threads (default: one per core, at most 4), each
 * told to use `threads` (default: the cores shared among the instances), behind one `LoadedModel`. With
 * `instances: 0` the model runs on the calling thread instead (see `LoadFrameworkModelOptions.instances`).
 */
export async function startModel({
  module,
  model,
  workerModule,
  init,
  openRunner,
  options,
}: StartModelOptions): Promise<LoadedModel> {
  const instances = options.instances ?? defaultInstances();
  if (!Number.isInteger(instances) || instances < 0)
    throw new InvalidArgument(
      `instances must be 0 (run on the event loop) or a positive integer, got ${String(instances)}`,
    );
  const threads = options.threads ?? Math.max(1, Math.floor(availableParallelism() / Math.max(1, instances)));
  if (!Number.isInteger(threads) || threads < 1)
    throw new InvalidArgument(`threads must be a positive integer, got ${String(threads)}`);
  const described = {
    name: model.name,
    tag: model.tag,
    module,
    signature: model.signature,
    classes: model.classes,
    metadata: model.metadata,
  };
  // A feed the model has no input for (or one left out), or an empty dimension it cannot run, is the caller's
  // mistake: a 400 naming the model's inputs, before the runtime turns it into a run failure.
  const checked = (inputs: NamedTensors) => {
    checkInputNames(model.name, model.signature.inputs, inputs);
    checkEmptyDimensions(model.name, model.signature, inputs);
    return inputs;
  };
  if (instances === 0) {
    const runner = await openRunner(init(threads));
    // One runner, one call at a time: what batching's maxConcurrentBatches should be.
    return {
      ...described,
      instances: 1,
      run: async (inputs) => runner.run(checked(inputs)),
      close: () => runner.close(),
    };
  }
  const pool = await RunnerPool.start({
    model: model.name,
    workerModule,
    init: init(threads),
    instances,
    transferInputs: options.transferInputs,
  });
  return {
    ...described,
    instances: pool.instances,
    run: async (inputs, signal) => pool.run(checked(inputs), signal),
    close: () => pool.close(),
    health: () => pool.health(),
  };
}

/** A model opened from a file or folder (not the store): no tag, classes or metadata. */
export function modelOnDisk(name: string, path: string, signature: ModelSignature): ResolvedModel {
  return { name, tag: undefined, path, signature, classes: undefined, metadata: {} };
}

/**
 * The worker module beside a framework's module: `<name>.ts` when running from source (tests), the bundled
 * `<name>.js` once built.
 */
export function siblingModule(moduleUrl: string, name: string): URL {
  return new URL(`./${name}${moduleUrl.endsWith('.ts') ? '.ts' : '.js'}`, moduleUrl);
}
