import { basename, dirname, extname } from 'node:path';
import {
  type LoadedModel,
  type LoadFrameworkModelOptions,
  modelOnDisk,
  type ResolvedModel,
  resolveStoredModel,
  siblingModule,
  startModel,
} from '@tiffin/core/internal';
import { checkBackendNames } from './backend.js';
import { inspectTfjs } from './inspect.js';
import { isTfjsPath } from './model-path.js';
import { openRunner, type TfjsRunnerInit } from './runner.js';
import { MODULE } from './save-model.js';

/** A loaded TensorFlow.js model: `run` by tensor name, on `instances` worker threads. */
export type TfjsModel = LoadedModel;

export type LoadTfjsModelOptions = LoadFrameworkModelOptions;

/** A folder's model is named after the folder; `emotion.json` after its file. */
function nameOfPath(modelJson: string): string {
  const file = basename(modelJson, extname(modelJson));
  return file === 'model' ? basename(dirname(modelJson)) : file;
}

async function resolveModel(tagOrPath: string, options: LoadTfjsModelOptions): Promise<ResolvedModel> {
  if (await isTfjsPath(tagOrPath)) {
    const { files, signature } = await inspectTfjs(tagOrPath, options.signatures);
    return modelOnDisk(nameOfPath(files.modelJson), files.modelJson, signature);
  }
  return resolveStoredModel(tagOrPath, MODULE, options);
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
  return startModel({
    module: MODULE,
    model,
    workerModule: siblingModule(import.meta.url, 'runner-worker'),
    openRunner: (init) => openRunner(init as TfjsRunnerInit),
    options,
    init: (threads): TfjsRunnerInit => ({ path: model.path, backends, threads }),
  });
}
