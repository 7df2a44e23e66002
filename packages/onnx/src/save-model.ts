import { basename } from 'node:path';
import { type SaveFrameworkModelOptions, saveFrameworkModel } from '@tiffin/core/internal';
import { inspectOnnx } from './inspect.js';
import { locateOnnx } from './model-file.js';

/** The store's Module column for ONNX models. */
export const MODULE = 'onnx';

/**
 * Put an ONNX model in the model store and return its tag (`name:version`). `source` is a `.onnx` file, a
 * folder holding one `.onnx` file and its external data, or the model's bytes. The model is opened first: its
 * signature (inputs, outputs, dtypes, shapes, batchability on dimension 0) is read from the graph and stored
 * with the user's overrides; a file ONNX Runtime cannot load is refused and the store is left as it was.
 */
export async function saveModel(
  name: string,
  source: string | Uint8Array,
  options: SaveFrameworkModelOptions = {},
): Promise<string> {
  if (typeof source !== 'string') {
    const { signature } = await inspectOnnx(source, options.signatures);
    const stored = await saveFrameworkModel({
      ...options,
      module: MODULE,
      name,
      files: { 'model.onnx': source },
      file: 'model.onnx',
      signature,
    });
    return stored.tag;
  }
  const located = await locateOnnx(source);
  const { signature } = await inspectOnnx(located.file, options.signatures);
  const stored = await saveFrameworkModel({
    ...options,
    module: MODULE,
    name,
    ...(located.dir ? { dir: located.dir } : { paths: [located.file] }),
    file: basename(located.file),
    signature,
  });
  return stored.tag;
}
