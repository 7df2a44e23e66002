import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { InvalidArgument, NotFound } from '@tiffin/core/internal';

/** Where an ONNX model lies: a `.onnx` file, or a folder holding one (with its external data files). */
export interface OnnxSource {
  /** The folder to copy whole (a model with external data), or undefined for a lone file. */
  dir: string | undefined;
  /** Absolute path of the .onnx file. */
  file: string;
  /** The model's default name: the file's name without `.onnx`. */
  name: string;
}

/** Find the model a path names; a missing path or a folder with no (or several) `.onnx` files is refused. */
export async function locateOnnx(path: string): Promise<OnnxSource> {
  const full = resolve(path);
  const info = await stat(full).catch(() => null);
  if (!info) throw new NotFound(`No ONNX model at ${path}: no such file or folder`);
  if (info.isFile()) return { dir: undefined, file: full, name: basename(full, extname(full)) };
  const models = (await readdir(full)).filter((f) => f.toLowerCase().endsWith('.onnx'));
  if (models.length !== 1) {
    throw new InvalidArgument(
      models.length === 0
        ? `Folder ${path} holds no .onnx file`
        : `Folder ${path} holds several .onnx files (${models.join(', ')}); name the file instead`,
    );
  }
  return { dir: full, file: join(full, models[0]!), name: basename(models[0]!, extname(models[0]!)) };
}

/** True when a path names an ONNX model: a `.onnx` file, or a folder holding exactly one. */
export async function isOnnxPath(path: string): Promise<boolean> {
  try {
    const source = await locateOnnx(path);
    return source.file.toLowerCase().endsWith('.onnx');
  } catch {
    return false;
  }
}
