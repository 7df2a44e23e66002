import { InvalidArgument } from '@tiffin/core';
import type {
  ApplyLoraOptions,
  LoraComponent,
  LoraFile,
  LoraFileModule,
  LoraResolution,
  LoraTarget,
  ResolvedLoraModule,
} from './types.js';

const KOHYA_PREFIX: Record<LoraComponent, string[]> = {
  unet: ['lora_unet_'],
  text_encoder: ['lora_te_', 'lora_te1_'],
  text_encoder_2: ['lora_te2_'],
};

/**
 * kohya key → base weight name, built from the base model (docs/spec/diffusion.md §9.2) so `_` vs `.` is never guessed:
 * every Linear/Conv weight `<component>.<P>.weight` registers `<prefix><P with . → _>`.
 */
export function kohyaKeyMap(target: LoraTarget): Map<string, string> {
  const map = new Map<string, string>();
  for (const name of target.baseWeightNames()) {
    if (!name.endsWith('.weight')) continue;
    const shape = target.baseWeightShape(name);
    if (!shape || (shape.length !== 2 && shape.length !== 4)) continue;
    const dot = name.indexOf('.');
    const component = name.slice(0, dot) as LoraComponent;
    const path = name.slice(dot + 1, -'.weight'.length).replace(/\./g, '_');
    for (const prefix of KOHYA_PREFIX[component] ?? []) map.set(prefix + path, name);
  }
  return map;
}

const prod = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Why `module` cannot update a weight of `shape`, or null when it fits (docs/spec/diffusion.md §9.3 reshape rule). */
function shapeProblem(module: LoraFileModule, shape: readonly number[]): string | null {
  const out = module.up.shape[0];
  const inner = prod(module.down.shape.slice(1));
  if (prod(module.up.shape.slice(2)) !== 1) return `up weight [${module.up.shape.join(', ')}] is not 1×1`;
  if (out !== shape[0] || inner !== prod(shape.slice(1))) {
    return `LoRA [${out}, ${module.down.shape.slice(1).join(', ')}] does not fit base weight [${shape.join(', ')}]`;
  }
  return null;
}

/** Matches a parsed LoRA file against a target's base weights. */
export function resolveLora(file: LoraFile, target: LoraTarget): LoraResolution {
  const kohya = file.layout === 'kohya' ? kohyaKeyMap(target) : null;
  const modules: ResolvedLoraModule[] = [];
  const unmatched: { key: string; reason: string }[] = [];
  for (const module of file.modules) {
    const weightName = kohya ? kohya.get(module.key) : `${module.key}.weight`;
    const shape = weightName ? target.baseWeightShape(weightName) : undefined;
    if (!weightName || !shape) {
      unmatched.push({ key: module.key, reason: 'no such layer in the base model' });
      continue;
    }
    const problem = shapeProblem(module, shape);
    if (problem) {
      unmatched.push({ key: module.key, reason: problem });
      continue;
    }
    const rank = module.down.shape[0];
    modules.push({ module, weightName, rank, alphaScale: module.alpha === null ? 1 : module.alpha / rank });
  }
  return { modules, unmatched };
}

/**
 * The checks shared by merging and run-time application: a finite scale, and no unmatched module
 * unless `onUnmatched: 'skip'` (then they are reported).
 */
export function resolveForApply(
  file: LoraFile,
  target: LoraTarget,
  options: ApplyLoraOptions,
): LoraResolution & { scale: number } {
  const scale = options.scale ?? 1;
  if (!Number.isFinite(scale)) throw new InvalidArgument(`LoRA scale must be a finite number, got ${scale}`);
  const { modules, unmatched } = resolveLora(file, target);
  if (unmatched.length > 0 && (options.onUnmatched ?? 'error') === 'error') {
    const shown = unmatched.slice(0, 5).map((u) => `${u.key} (${u.reason})`);
    const more = unmatched.length > 5 ? `, and ${unmatched.length - 5} more` : '';
    throw new InvalidArgument(
      `LoRA${file.source ? ` ${file.source}` : ''} does not match this model: ${unmatched.length} of ${file.modules.length} modules unmatched: ${shown.join('; ')}${more}`,
    );
  }
  return { scale, modules, unmatched };
}
