import { InvalidArgument } from '../errors/index.js';
import { type ModelSignature, readSignature } from '../signature/signature.js';
import { unsafeRelativePath } from '../store/contained-path.js';
import { CorruptedStoreEntry } from '../store/errors.js';
import { ModelStore, type StoredModel } from '../store/model-store.js';
import type { FrameworkModelMetadata, SaveFrameworkModelOptions } from './framework.js';

export interface FrameworkSave extends SaveFrameworkModelOptions {
  /** The store's Module column (`onnx`, `tfjs`). */
  module: string;
  name: string;
  /** Copy this folder (a TF.js model folder) ... */
  dir?: string;
  /** ... or these files (an `.onnx` file and its external data) ... */
  paths?: string[];
  /** ... or these in-memory files (relative path → bytes). */
  files?: Record<string, Uint8Array>;
  /** The model's path inside the saved files. */
  file: string;
  /** The checked signature (read from the model, overrides applied). */
  signature: ModelSignature;
}

/**
 * Save a framework model: the files, the module name, and `FrameworkModelMetadata` in the manifest. The
 * caller has already opened the model and read its signature, so a corrupt file never reaches the store.
 */
export async function saveFrameworkModel(options: FrameworkSave): Promise<StoredModel> {
  const metadata: FrameworkModelMetadata = {
    file: options.file,
    signature: options.signature,
    ...(options.classes ? { classes: [...options.classes] } : {}),
    ...(options.metadata ? { user: options.metadata } : {}),
  };
  const store = options.store ?? new ModelStore();
  return store.save({
    name: options.name,
    module: options.module,
    dir: options.dir,
    paths: options.paths,
    files: options.files,
    labels: options.labels,
    metadata: metadata as unknown as Record<string, unknown>,
  });
}

/** The framework metadata of a stored model, checked; a model another module saved is refused by name. */
export function readFrameworkMetadata(model: StoredModel, module: string): FrameworkModelMetadata {
  if (model.manifest.module !== module) {
    throw new InvalidArgument(
      `Model '${model.tag}' was saved by module '${model.manifest.module}', not '${module}'; load it with that module`,
    );
  }
  const m = model.manifest.metadata;
  if (typeof m.file !== 'string')
    throw new InvalidArgument(`Model '${model.tag}' has no model file in its metadata; save it again`);
  // An imported manifest names its file: a path that leaves the entry is refused before anything opens it.
  if (unsafeRelativePath(m.file) !== null)
    throw new CorruptedStoreEntry(
      `Model '${model.tag}' names a model file outside its entry; delete it and import or save it again`,
    );
  const classes = Array.isArray(m.classes) ? m.classes.map(String) : undefined;
  const user =
    typeof m.user === 'object' && m.user !== null ? (m.user as Record<string, unknown>) : undefined;
  return {
    file: m.file,
    signature: readSignature(m.signature, `model '${model.tag}' signature`),
    ...(classes ? { classes } : {}),
    ...(user ? { user } : {}),
  };
}
