import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/** A model's hashes as A1111 lists them: the SHA-256 of its weights and `hash`, its first 10 hex digits. */
export interface ModelHash {
  sha256: string;
  short: string;
}

/** The UNet weight files of a diffusers folder, in the order they are looked for (ONNX exports last). */
const UNET_FILES = [
  'diffusion_pytorch_model.safetensors',
  'diffusion_pytorch_model.fp16.safetensors',
  'diffusion_pytorch_model.bin',
  'model.onnx',
];

/** The file whose SHA-256 names a model: a single-file checkpoint itself, else its folder's UNet weights. */
export function hashedFile(modelPath: string): string | undefined {
  if (!existsSync(modelPath)) return undefined;
  if (statSync(modelPath).isFile()) return modelPath;
  const unet = join(modelPath, 'unet');
  if (!existsSync(unet)) return undefined;
  const named = UNET_FILES.map((f) => join(unet, f)).find((f) => existsSync(f));
  if (named) return named;
  const any = readdirSync(unet)
    .filter((f) => /\.(safetensors|onnx|bin)$/.test(f))
    .sort()[0];
  return any ? join(unet, any) : undefined;
}

function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}

/** Hashes already taken, by file, size and modification time: a model's weights are read once per process. */
const cache = new Map<string, Promise<ModelHash | null>>();

/**
 * The model's hash as A1111's `sd-models` (`hash`, `sha256`) and infotext (`Model hash`) give it: SHA-256 of the
 * checkpoint file, or of the folder's UNet weights, streamed once and cached; null when there is no weight file
 * (or it cannot be read), which A1111 clients take as an unknown hash.
 */
export function modelHash(modelPath: string): Promise<ModelHash | null> {
  const file = hashedFile(modelPath);
  if (!file) return Promise.resolve(null);
  const { size, mtimeMs } = statSync(file);
  const key = `${file}\0${size}\0${mtimeMs}`;
  let hashed = cache.get(key);
  if (!hashed) {
    hashed = sha256Of(file).then(
      (sha256) => ({ sha256, short: sha256.slice(0, 10) }),
      () => null,
    );
    cache.set(key, hashed);
  }
  return hashed;
}

/** The title A1111 lists a model under: its name and short hash (`name [0123456789]`), as A1111 titles them. */
export function modelTitle(modelPath: string, hash: ModelHash | null): string {
  const name = basename(modelPath);
  return hash ? `${name} [${hash.short}]` : name;
}

/** The served model as the A1111 routes name it. */
export interface ServedModel {
  /** The folder's (or file's) name, A1111's `model_name` and infotext `Model`. */
  name: string;
  /** The checkpoint file's (or folder's) name, A1111's `filename` without the server's path. */
  file: string;
  /** `file [hash]`, A1111's `title` and `sd_model_checkpoint`. */
  title: string;
  hash: ModelHash | null;
}

/** The served model's name, title and hash (hashed once, see `modelHash`). */
export async function servedModel(modelPath: string): Promise<ServedModel> {
  const hash = await modelHash(modelPath);
  const name = basename(modelPath).replace(/\.(safetensors|ckpt)$/, '');
  return { name, file: basename(modelPath), title: modelTitle(modelPath, hash), hash };
}
