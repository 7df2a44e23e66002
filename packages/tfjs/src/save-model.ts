import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type SaveFrameworkModelOptions, saveFrameworkModel } from '@tiffin/core/internal';
import { inspectTfjs } from './inspect.js';
import { type SavableTfjsModel, writeModelFolder } from './model-writer.js';

/** The store's Module column for TensorFlow.js models. */
export const MODULE = 'tfjs';

async function saveFolder(name: string, path: string, options: SaveFrameworkModelOptions): Promise<string> {
  const { files, signature } = await inspectTfjs(path, options.signatures);
  // model.json and its shards only: a folder may hold other models (converters write several side by side).
  // Shards in sub-folders keep the layout by copying the folder.
  const flat = files.shards.every((s) => basename(s) === s);
  const stored = await saveFrameworkModel({
    ...options,
    module: MODULE,
    name,
    ...(flat
      ? { paths: [files.modelJson, ...files.shards.map((s) => join(files.folder, s))] }
      : { dir: files.folder }),
    file: basename(files.modelJson),
    signature,
  });
  return stored.tag;
}

/**
 * Put a TensorFlow.js model in the model store and return its tag (`name:version`). `source` is a model folder
 * (model.json and weight shards, as tfjs or tensorflowjs_converter write it), a model.json path, or an in-memory
 * LayersModel. The model is opened first: its signature is read from model.json (a GraphModel's undeclared
 * output shapes by a trial run) and stored with the user's overrides; a folder tfjs cannot load is refused and
 * the store is left as it was.
 */
export async function saveModel(
  name: string,
  source: string | SavableTfjsModel,
  options: SaveFrameworkModelOptions = {},
): Promise<string> {
  if (typeof source === 'string') return saveFolder(name, source, options);
  const scratch = await mkdtemp(join(tmpdir(), 'tiffin-tfjs-'));
  try {
    return await saveFolder(name, await writeModelFolder(source, scratch), options);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
