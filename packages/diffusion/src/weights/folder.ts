import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, containedPath } from '@tiffin/core/internal';
import { SafetensorsFile } from './safetensors.js';
import type { WeightStore } from './store.js';
import type { WeightSpec } from './weight-spec.js';

/** The model folder is not a usable diffusers folder (missing or invalid files). */
export class ModelFolderError extends ConfigError {
  static override readonly code: string = 'MODEL_FOLDER';
}

/** model_index.json: component name → [library, class] (or [null, null]). */
export interface ModelIndex {
  _class_name: string;
  _diffusers_version?: string;
  components: Record<string, [string | null, string | null]>;
  raw: Record<string, unknown>;
}

/** Component classes this engine can run, per component slot. */
export const SUPPORTED_COMPONENTS: Readonly<Record<string, readonly string[]>> = {
  text_encoder: ['CLIPTextModel'],
  tokenizer: ['CLIPTokenizer', 'CLIPTokenizerFast'],
  // SDXL's second encoder and tokenizer (docs/spec/diffusion.md §10).
  text_encoder_2: ['CLIPTextModelWithProjection'],
  tokenizer_2: ['CLIPTokenizer', 'CLIPTokenizerFast'],
  unet: ['UNet2DConditionModel'],
  vae: ['AutoencoderKL'],
  scheduler: [
    'PNDMScheduler',
    'DDIMScheduler',
    'EulerDiscreteScheduler',
    'EulerAncestralDiscreteScheduler',
    'DPMSolverMultistepScheduler',
    'LMSDiscreteScheduler',
    'DDPMScheduler',
  ],
};
/** Optional components that are ignored when present. */
const IGNORED_COMPONENTS = new Set(['safety_checker', 'feature_extractor', 'image_encoder']);

export function readJson(path: string, what: string): Record<string, unknown> {
  if (!existsSync(path)) throw new ModelFolderError(`${what} not found: ${path}`);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new ModelFolderError(`${what} is not valid JSON (${path}): ${(e as Error).message}`);
  }
}

export function readModelIndex(dir: string): ModelIndex {
  const raw = readJson(join(dir, 'model_index.json'), 'model_index.json');
  const components: Record<string, [string | null, string | null]> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith('_') || !Array.isArray(v) || v.length !== 2) continue;
    components[k] = v as [string | null, string | null];
  }
  if (components.text_encoder_2?.[1] && !components.text_encoder?.[1])
    throw new ModelFolderError(
      'model_index.json has text_encoder_2 but no text_encoder: SDXL refiner folders are not supported (only the SDXL base layout)',
    );
  if (raw.requires_aesthetics_score === true)
    throw new ModelFolderError(
      'model_index.json has requires_aesthetics_score: SDXL refiner folders are not supported (no aesthetic score time ids)',
    );
  const required = ['text_encoder', 'tokenizer', 'unet', 'vae', 'scheduler'];
  if (components.text_encoder_2?.[1]) required.push('text_encoder_2', 'tokenizer_2');
  for (const slot of required) {
    const entry = components[slot];
    if (!entry || entry[1] === null) throw new ModelFolderError(`model_index.json has no ${slot} component`);
    if (!SUPPORTED_COMPONENTS[slot].includes(entry[1]))
      throw new ModelFolderError(
        `model_index.json: ${slot} class ${entry[1]} is not supported (supported: ${SUPPORTED_COMPONENTS[slot].join(', ')})`,
      );
  }
  for (const [slot, entry] of Object.entries(components)) {
    if (entry[1] !== null && !(slot in SUPPORTED_COMPONENTS) && !IGNORED_COMPONENTS.has(slot))
      throw new ModelFolderError(`model_index.json: unknown component ${slot} (${entry[1]})`);
  }
  return {
    _class_name: String(raw._class_name),
    _diffusers_version: raw._diffusers_version as string | undefined,
    components,
    raw,
  };
}

/**
 * Weight files of a component: `<stem>[.variant].safetensors`, or the shards listed in
 * `<stem>[.variant].safetensors.index.json`. Pickled `.bin`/`.ckpt` files are refused.
 */
export function componentWeightFiles(componentDir: string, stem: string, variant?: string): string[] {
  const base = variant ? `${stem}.${variant}` : stem;
  const single = join(componentDir, `${base}.safetensors`);
  if (existsSync(single)) return [single];
  const index = join(componentDir, `${base}.safetensors.index.json`);
  if (existsSync(index)) {
    const j = readJson(index, 'safetensors index') as { weight_map?: Record<string, string> };
    if (!j.weight_map) throw new ModelFolderError(`${index} has no weight_map`);
    // Shard names come from the index file (downloaded with the model): each must stay in the component's folder.
    return [...new Set(Object.values(j.weight_map))].map((f) =>
      containedPath(componentDir, String(f), `${index}: weight_map file`),
    );
  }
  if (existsSync(join(componentDir, `${base}.bin`)) || existsSync(join(componentDir, `${base}.ckpt`)))
    throw new ModelFolderError(
      `${componentDir}: only a pickled ${base}.bin/.ckpt is present; safetensors required`,
    );
  throw new ModelFolderError(`weight file not found: ${single}`);
}

/** Names that older files use for current weights (legacy VAE attention). */
export function legacyAliases(name: string): string[] {
  const m = /^(.*\.attentions\.0)\.(to_q|to_k|to_v|to_out\.0)\.(weight|bias)$/.exec(name);
  if (!m) return [];
  const legacy = { to_q: 'query', to_k: 'key', to_v: 'value', 'to_out.0': 'proj_attn' }[m[2]];
  return [`${m[1]}.${legacy}.${m[3]}`];
}

export interface LoadReport {
  /** Tensors in the files that the model does not use (besides known leftovers like position_ids). */
  unexpected: string[];
}

/** Fill a WeightStore from safetensors files, one tensor at a time. */
export function loadWeightsInto(store: WeightStore, files: readonly string[]): LoadReport {
  const opened = files.map((f) => SafetensorsFile.open(f));
  try {
    const where = new Map<string, SafetensorsFile>();
    for (const f of opened) for (const n of f.names()) where.set(n, f);
    const used = new Set<string>();
    for (const spec of store.specList()) {
      const source = [spec.name, ...legacyAliases(spec.name)].find((n) => where.has(n));
      if (!source)
        throw new ModelFolderError(
          `${store.component}: weight ${spec.name} is missing from ${files.join(', ')}`,
        );
      const file = where.get(source) as SafetensorsFile;
      store.setTorch(spec.name, file.entry(source).shape, file.readFloat32(source));
      used.add(source);
    }
    const unexpected = [...where.keys()].filter((n) => !used.has(n) && !n.endsWith('position_ids'));
    return { unexpected };
  } finally {
    for (const f of opened) f.close();
  }
}

/** Weight specs → the same names with deterministic test values (used by the tiny pipeline). */
export type SpecList = readonly WeightSpec[];
