import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { io } from '@tensorflow/tfjs';
import { InvalidArgument } from '@tiffin/core';

/** The two kinds of TensorFlow.js model folder. */
export type TfjsModelKind = 'layers' | 'graph';

/** A model.json read and checked, with its weights in memory. */
export interface TfjsModelFiles {
  kind: TfjsModelKind;
  /** Absolute path of model.json (or however the converter named it: `emotion.json`). */
  modelJson: string;
  /** The folder holding model.json and its weight shards. */
  folder: string;
  /** Shard file names relative to `folder`, in manifest order. */
  shards: string[];
  artifacts: io.ModelArtifacts;
}

/** model.json is topology and a manifest: more than this is not a model.json. */
const MAX_MODEL_JSON_BYTES = 256 * 1024 * 1024;

const BYTES_PER_ELEMENT: Record<string, number> = {
  float32: 4,
  int32: 4,
  bool: 1,
  complex64: 8,
  uint8: 1,
  uint16: 2,
  float16: 2,
};

const refuse = (path: string, why: string): never => {
  throw new InvalidArgument(`${path} is not a TensorFlow.js model: ${why}`, { code: 'TFJS_MODEL_INVALID' });
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `folder/` → `folder/model.json`; a `.json` file is taken as it is. */
export async function resolveModelJson(path: string): Promise<string> {
  const info = await stat(path).catch(() => refuse(path, 'no such file or folder'));
  const file = info.isDirectory() ? join(path, 'model.json') : path;
  if (info.isDirectory()) await stat(file).catch(() => refuse(path, 'the folder has no model.json'));
  return realpath(file);
}

/** Layers or graph, from the `format` field, else from the shape of the topology (older converters). */
function kindOf(path: string, json: Record<string, unknown>): TfjsModelKind {
  const topology = json.modelTopology;
  if (!isRecord(topology)) return refuse(path, 'model.json has no modelTopology');
  if (json.format === 'graph-model' || Array.isArray(topology.node)) return 'graph';
  if (json.format === 'layers-model' || 'class_name' in topology || 'model_config' in topology)
    return 'layers';
  return refuse(path, `unknown format '${String(json.format)}'`);
}

interface WeightGroup {
  paths: string[];
  weights: io.WeightsManifestEntry[];
}

function readManifest(path: string, json: Record<string, unknown>): WeightGroup[] {
  const manifest = json.weightsManifest ?? [];
  if (!Array.isArray(manifest)) return refuse(path, 'weightsManifest is not a list');
  return manifest.map((group, g) => {
    if (!isRecord(group) || !Array.isArray(group.paths) || !Array.isArray(group.weights))
      return refuse(path, `weightsManifest[${g}] needs paths and weights`);
    for (const w of group.weights) {
      if (
        !isRecord(w) ||
        typeof w.name !== 'string' ||
        typeof w.dtype !== 'string' ||
        !Array.isArray(w.shape) ||
        !w.shape.every((d) => Number.isInteger(d) && (d as number) >= 0)
      )
        return refuse(path, `weightsManifest[${g}] has a weight without name, dtype and shape`);
    }
    if (!group.paths.every((p) => typeof p === 'string' && p.length > 0))
      return refuse(path, `weightsManifest[${g}].paths must be file names`);
    return { paths: group.paths as string[], weights: group.weights as io.WeightsManifestEntry[] };
  });
}

/** Bytes a weight takes in a shard, or null where tfjs decides it while reading (strings). */
function weightBytes(w: io.WeightsManifestEntry): number | null {
  const dtype = w.quantization?.dtype ?? w.dtype;
  const size = BYTES_PER_ELEMENT[dtype];
  if (size === undefined) return null;
  return w.shape.reduce((n, d) => n * d, 1) * size;
}

/** A shard path inside the model's folder (converters write plain names; `../` or absolute paths are refused). */
function shardPath(modelJson: string, folder: string, name: string): string {
  const full = join(folder, name);
  const rel = relative(folder, full);
  if (isAbsolute(name) || rel.startsWith('..') || rel.split(sep).includes('..'))
    return refuse(modelJson, `weight file '${name}' is outside the model's folder`);
  return full;
}

/**
 * Read a TensorFlow.js model folder (or its model.json): the JSON is checked before use, every weight
 * shard must lie in the folder, and the shards together must hold exactly the bytes the manifest declares
 * (a truncated or padded download is refused before tfjs allocates anything).
 */
export async function readModelFolder(path: string): Promise<TfjsModelFiles> {
  const modelJson = await resolveModelJson(path);
  const folder = dirname(modelJson);
  const size = (await stat(modelJson)).size;
  if (size > MAX_MODEL_JSON_BYTES)
    refuse(path, `${basename(modelJson)} is over ${MAX_MODEL_JSON_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(modelJson, 'utf8'));
  } catch (e) {
    return refuse(path, `${basename(modelJson)} is not JSON (${(e as Error).message})`);
  }
  if (!isRecord(json)) return refuse(path, `${basename(modelJson)} is not a JSON object`);
  const kind = kindOf(path, json);
  const groups = readManifest(path, json);

  const shards = groups.flatMap((g) => g.paths);
  const buffers: Buffer[] = [];
  for (const name of shards) {
    const file = shardPath(path, folder, name);
    buffers.push(await readFile(file).catch(() => refuse(path, `weight file '${name}' is missing`)));
  }
  const weightSpecs = groups.flatMap((g) => g.weights);
  const declared = weightSpecs.map(weightBytes);
  const actual = buffers.reduce((n, b) => n + b.length, 0);
  if (declared.every((d) => d !== null)) {
    const expected = (declared as number[]).reduce((a, b) => a + b, 0);
    if (actual !== expected)
      refuse(path, `the weight files hold ${actual} bytes, the manifest declares ${expected}`);
  }
  const weightData = new Uint8Array(actual);
  let at = 0;
  for (const b of buffers) {
    weightData.set(b, at);
    at += b.length;
  }
  const artifacts: io.ModelArtifacts = {
    modelTopology: json.modelTopology as io.ModelArtifacts['modelTopology'],
    format: typeof json.format === 'string' ? json.format : undefined,
    generatedBy: typeof json.generatedBy === 'string' ? json.generatedBy : undefined,
    convertedBy: typeof json.convertedBy === 'string' ? json.convertedBy : undefined,
    weightSpecs,
    weightData: weightData.buffer,
    ...(isRecord(json.signature) ? { signature: json.signature } : {}),
    ...(isRecord(json.userDefinedMetadata)
      ? { userDefinedMetadata: json.userDefinedMetadata as io.ModelArtifacts['userDefinedMetadata'] }
      : {}),
    ...(isRecord(json.modelInitializer) ? { modelInitializer: json.modelInitializer } : {}),
  };
  return { kind, modelJson, folder, shards, artifacts };
}
