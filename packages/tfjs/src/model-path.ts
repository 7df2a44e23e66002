import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** How much of a .json file is read to tell a tfjs model.json from other JSON. */
const SNIFF_BYTES = 4096;

/**
 * True when a path names a TensorFlow.js model: a folder holding model.json, or a .json file whose start shows
 * a model (`modelTopology`, `format: layers-model|graph-model`). Judged without parsing the whole file.
 */
export async function isTfjsPath(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => null);
  if (!info) return false;
  const file = info.isDirectory() ? join(path, 'model.json') : path;
  if (!file.toLowerCase().endsWith('.json')) return false;
  const handle = await open(file).catch(() => null);
  if (!handle) return false;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    const head = buffer.subarray(0, bytesRead).toString('utf8');
    return /"modelTopology"\s*:|"format"\s*:\s*"(layers|graph)-model"/.test(head);
  } finally {
    await handle.close();
  }
}
