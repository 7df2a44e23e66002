import {
  type LoadedModel,
  type LoadFrameworkModelOptions,
  modelOnDisk,
  type ResolvedModel,
  resolveStoredModel,
  siblingModule,
  startModel,
} from '@tiffin/core/internal';
import { inspectOnnx } from './inspect.js';
import { inspectOnnxOffThread } from './inspect-thread.js';
import { isOnnxPath, locateOnnx } from './model-file.js';
import { type OnnxRunnerInit, openSessionRunner } from './runtime/session-runner.js';
import { MODULE } from './save-model.js';

/** A loaded ONNX model: `run` by tensor name, on `instances` worker threads. */
export type OnnxModel = LoadedModel;

export type LoadOnnxModelOptions = LoadFrameworkModelOptions;

async function resolveModel(tagOrPath: string, options: LoadOnnxModelOptions): Promise<ResolvedModel> {
  if (await isOnnxPath(tagOrPath)) {
    const located = await locateOnnx(tagOrPath);
    const inspect = options.inspectOffThread ? inspectOnnxOffThread : inspectOnnx;
    const { signature } = await inspect(located.file, options.signatures);
    return modelOnDisk(located.name, located.file, signature);
  }
  return resolveStoredModel(tagOrPath, MODULE, options);
}

/**
 * Load an ONNX model from the store (`name:latest`, `name:version`) or from a `.onnx` file, and start its
 * runner instances: `instances` worker threads (default: one per core, at most 4), each with its own session of
 * `threads` intra-op threads (default: the cores shared among the instances) on `executionProviders` (default
 * `cpu`; e.g. `['cuda', 'cpu']` where the CUDA provider is installed).
 */
export async function loadModel(tagOrPath: string, options: LoadOnnxModelOptions = {}): Promise<OnnxModel> {
  const model = await resolveModel(tagOrPath, options);
  return startModel({
    module: MODULE,
    model,
    workerModule: siblingModule(import.meta.url, 'runner-worker'),
    openRunner: (init) => openSessionRunner(init as OnnxRunnerInit),
    options,
    init: (threads): OnnxRunnerInit => ({
      path: model.path,
      executionProviders: options.executionProviders ? [...options.executionProviders] : undefined,
      threads,
      outputs: model.signature.outputs.map((t) => t.name),
    }),
  });
}
