import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConfigError } from '@tiffin/core/internal';
import { z } from 'zod';
import { SCHEDULER_NAMES, type SchedulerName } from '../schedulers/registry.js';
import type { SchedulerConfig } from '../schedulers/types.js';

/**
 * The file in a model folder (beside `model_index.json`) that carries the model's own generation defaults: the
 * settings its weights were made for (a distilled model's few steps and no guidance, a small model's guidance).
 */
export const MODEL_DEFAULTS_FILE = 'tiffin_defaults.json';

/** Beside a LoRA file `<name>.safetensors`: `<name>.tiffin_defaults.json`, that LoRA's own defaults. */
export const LORA_DEFAULTS_SUFFIX = '.tiffin_defaults.json';

/**
 * Generation defaults owned by a model (or a LoRA): what a request that leaves a field out gets. Every key is
 * optional; a request's own value always wins.
 */
export interface ModelDefaults {
  /** The scheduler (default: the folder's `scheduler/scheduler_config.json` class). */
  scheduler?: SchedulerName;
  /**
   * diffusers scheduler config keys laid over the folder's `scheduler_config.json` whichever scheduler runs, e.g.
   * `{"timestep_spacing": "trailing"}` for SD-Turbo or `{"use_karras_sigmas": true}`.
   */
  scheduler_config?: SchedulerConfig;
  num_inference_steps?: number;
  guidance_scale?: number;
  height?: number;
  width?: number;
  negative_prompt?: string | null;
}

const size = z.int().min(8).max(16_384).multipleOf(8);

/** The file's schema: unknown keys are a mistake worth a clear message, not silently ignored. */
const defaultsSchema = z.strictObject({
  scheduler: z.enum(SCHEDULER_NAMES as [SchedulerName, ...SchedulerName[]]).optional(),
  scheduler_config: z.record(z.string(), z.unknown()).optional(),
  num_inference_steps: z.int().min(1).max(1000).optional(),
  guidance_scale: z.number().min(0).max(50).optional(),
  height: size.optional(),
  width: size.optional(),
  negative_prompt: z.string().max(10_000).nullable().optional(),
});

/** What an LCM-LoRA is used with (its authors' advice, diffusers' LCM-LoRA guide): the LCM scheduler, 4 steps, no guidance. */
export const LCM_LORA_DEFAULTS: Readonly<ModelDefaults> = {
  scheduler: 'lcm',
  num_inference_steps: 4,
  guidance_scale: 1,
};

/**
 * What SD-Turbo and SDXL-Turbo are made for (their model cards, diffusers' Turbo guide): one step, no guidance,
 * trailing timesteps.
 */
export const TURBO_DEFAULTS: Readonly<ModelDefaults> = {
  scheduler_config: { timestep_spacing: 'trailing' },
  num_inference_steps: 1,
  guidance_scale: 0,
};

/** Defaults for a hub model id whose repository carries none: Turbo models' (`*turbo*`), else none. */
export function hubModelDefaults(modelId: string): ModelDefaults | undefined {
  const name = modelId.split('/').pop() ?? '';
  return /turbo/i.test(name) ? { ...TURBO_DEFAULTS } : undefined;
}

/** `value` (from `where`) checked as {@link ModelDefaults}; a ConfigError naming the file otherwise. */
export function parseModelDefaults(value: unknown, where: string): ModelDefaults {
  const result = defaultsSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(`${where}: ${issue.path.join('.') || 'defaults'}: ${issue.message}`);
  }
  return result.data as ModelDefaults;
}

function readDefaultsFile(path: string): ModelDefaults {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${path} is not valid JSON`, { cause: err });
  }
  return parseModelDefaults(value, path);
}

/** A model folder's own defaults ({@link MODEL_DEFAULTS_FILE}), or none when it has no such file. */
export function readModelDefaults(modelDir: string): ModelDefaults {
  const path = join(modelDir, MODEL_DEFAULTS_FILE);
  return existsSync(path) ? readDefaultsFile(path) : {};
}

/**
 * A LoRA file's defaults: its `<name>.tiffin_defaults.json` when there is one; else {@link LCM_LORA_DEFAULTS} for a
 * file whose name says LCM (`lcm-lora-sdv1-5.safetensors`, `pytorch_lora_weights` inside an `lcm-lora-*` folder);
 * else none.
 */
export function readLoraDefaults(loraPath: string): ModelDefaults {
  const sidecar = loraPath.replace(/\.safetensors$/i, '') + LORA_DEFAULTS_SUFFIX;
  if (existsSync(sidecar)) return readDefaultsFile(sidecar);
  const named = /(^|[^a-z0-9])lcm([^a-z0-9]|$)/i;
  const parent = basename(join(loraPath, '..'));
  return named.test(basename(loraPath)) || named.test(parent) ? { ...LCM_LORA_DEFAULTS } : {};
}

/**
 * Layers of defaults, later ones winning key by key. A layer that names a scheduler brings its own
 * `scheduler_config` (or none): settings meant for one scheduler do not follow a switch to another.
 */
export function mergeDefaults(...layers: ReadonlyArray<ModelDefaults | undefined>): ModelDefaults {
  const out: ModelDefaults = {};
  for (const layer of layers) {
    if (!layer) continue;
    if (layer.scheduler !== undefined && layer.scheduler !== out.scheduler) delete out.scheduler_config;
    const { scheduler_config, ...rest } = layer;
    Object.assign(out, rest);
    if (scheduler_config) out.scheduler_config = { ...out.scheduler_config, ...scheduler_config };
  }
  return out;
}
