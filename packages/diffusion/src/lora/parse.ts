import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InvalidArgument } from '@tiffin/core';
import { SafetensorsFile } from '../weights/safetensors.js';
import type { LoraArray, LoraComponent, LoraFile, LoraFileModule, LoraLayout } from './types.js';

/** Markers of adapter kinds this package does not merge (docs/spec/diffusion.md §9.1 "not supported"). */
const UNSUPPORTED_MARKERS: [RegExp, string][] = [
  [/\.hada_w[12]_[ab]$|\.hada_t[12]$/, 'LyCORIS LoHa'],
  [/\.lokr_w[12](_[ab])?$|\.lokr_t2$/, 'LyCORIS LoKr'],
  [/\.diff(_b)?$/, 'full weight deltas (.diff)'],
  [/\.dora_scale$|\.lora_magnitude_vector/, 'DoRA'],
  [/\.on_input$|ia3_l/, 'IA3'],
  [/^(emb_params|string_to_param|clip_[lg])$/, 'textual-inversion embeddings'],
];

/** original-LDM UNet block names that some kohya files use (docs/spec/diffusion.md §9.1, optional mapping). */
const LDM_UNET = /^lora_unet_(input_blocks|middle_block|output_blocks)_/;

const KOHYA_PREFIXES: [string, LoraComponent][] = [
  ['lora_unet_', 'unet'],
  ['lora_te1_', 'text_encoder'],
  ['lora_te2_', 'text_encoder_2'],
  ['lora_te_', 'text_encoder'],
];

/** diffusers attention-processor names → module names (UNet, text encoder). */
const PROCESSOR_UNET: Record<string, string> = {
  to_q_lora: 'to_q',
  to_k_lora: 'to_k',
  to_v_lora: 'to_v',
  to_out_lora: 'to_out.0',
};
const PROCESSOR_TE: Record<string, string> = {
  to_q_lora: 'q_proj',
  to_k_lora: 'k_proj',
  to_v_lora: 'v_proj',
  to_out_lora: 'out_proj',
};

interface Classified {
  layout: LoraLayout;
  /** Module key: kohya stem, or `<component>.<dotted path>`. */
  key: string;
  component: LoraComponent;
  part: 'down' | 'up' | 'alpha';
}

function componentOfDotted(path: string): { component: LoraComponent; rest: string } {
  for (const c of ['text_encoder_2', 'text_encoder', 'unet'] as const) {
    if (path.startsWith(`${c}.`)) return { component: c, rest: path.slice(c.length + 1) };
  }
  // Oldest diffusers files have no prefix (UNet keys); raw PEFT text-encoder adapters start at text_model.
  return { component: path.startsWith('text_model.') ? 'text_encoder' : 'unet', rest: path };
}

/** Classifies one tensor name, or returns a reason why it cannot be used. */
function classify(name: string): Classified | { unsupported: string } {
  for (const [re, what] of UNSUPPORTED_MARKERS) if (re.test(name)) return { unsupported: what };
  if (LDM_UNET.test(name))
    return { unsupported: 'original-LDM UNet block names (input_blocks/middle_block/output_blocks)' };

  const kohya = /^(lora_(?:unet|te|te1|te2)_.+)\.(lora_down\.weight|lora_up\.weight|alpha)$/.exec(name);
  if (kohya) {
    const [, stem, suffix] = kohya;
    const component = (KOHYA_PREFIXES.find(([p]) => stem.startsWith(p)) as [string, LoraComponent])[1];
    const part = suffix === 'alpha' ? 'alpha' : suffix.startsWith('lora_down') ? 'down' : 'up';
    return { layout: 'kohya', key: stem, component, part };
  }

  const stripped = name.startsWith('base_model.model.') ? name.slice('base_model.model.'.length) : name;
  const peft = /^(.+)\.lora_([AB])(?:\.default)?\.weight$/.exec(stripped);
  if (peft) {
    const { component, rest } = componentOfDotted(peft[1]);
    return { layout: 'peft', key: `${component}.${rest}`, component, part: peft[2] === 'A' ? 'down' : 'up' };
  }

  const processor = /^(.+?)\.(?:processor\.)?(to_(?:q|k|v|out)_lora)\.(down|up)\.weight$/.exec(stripped);
  if (processor) {
    const { component, rest } = componentOfDotted(processor[1]);
    const table = component === 'unet' ? PROCESSOR_UNET : PROCESSOR_TE;
    return {
      layout: 'diffusers_processor',
      key: `${component}.${rest}.${table[processor[2]]}`,
      component,
      part: processor[3] as 'down' | 'up',
    };
  }

  const diffusers = /^(.+)\.(?:lora|lora_linear_layer)\.(down|up)\.weight$/.exec(stripped);
  if (diffusers) {
    const { component, rest } = componentOfDotted(diffusers[1]);
    return {
      layout: 'diffusers',
      key: `${component}.${rest}`,
      component,
      part: diffusers[2] as 'down' | 'up',
    };
  }

  // A dotted module path with `.alpha` (converted files) pairs with a diffusers/PEFT module.
  const alpha = /^(.+)\.alpha$/.exec(stripped);
  if (alpha) {
    const { component, rest } = componentOfDotted(alpha[1]);
    return { layout: 'diffusers', key: `${component}.${rest}`, component, part: 'alpha' };
  }
  return { unsupported: 'not a LoRA tensor name' };
}

/** PEFT `adapter_config.json`: global `lora_alpha`/`r` and per-module overrides. */
interface AdapterConfig {
  r?: number;
  lora_alpha?: number;
  rank_pattern?: Record<string, number>;
  alpha_pattern?: Record<string, number>;
}

function peftAlpha(config: AdapterConfig | null, key: string, rank: number): number | null {
  if (!config) return null;
  const path = key.slice(key.indexOf('.') + 1);
  const match = (pattern: Record<string, number> | undefined) =>
    pattern ? Object.entries(pattern).find(([k]) => path === k || path.endsWith(`.${k}`))?.[1] : undefined;
  const alpha = match(config.alpha_pattern) ?? config.lora_alpha;
  const r = match(config.rank_pattern) ?? config.r ?? rank;
  if (typeof alpha !== 'number') return null;
  // PEFT scales by lora_alpha / r; expressed as an alpha relative to the actual rank.
  return (alpha / r) * rank;
}

function readAdapterConfig(path: string): AdapterConfig | null {
  const file = join(dirname(path), 'adapter_config.json');
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as AdapterConfig;
  } catch (e) {
    throw new InvalidArgument(`LoRA adapter config ${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * Reads a LoRA safetensors file (kohya/A1111, diffusers, diffusers processor or PEFT layout, spec
 * 9.1) into float32 arrays. PEFT alpha comes from an `adapter_config.json` next to the file.
 * Throws InvalidArgument naming the problem for unsupported adapter kinds and broken pairs.
 */
export function readLoraFile(path: string): LoraFile {
  if (!path.endsWith('.safetensors')) {
    throw new InvalidArgument(
      `LoRA weights must be a .safetensors file (pickled .bin/.ckpt/.pt files are not read): ${path}`,
    );
  }
  let file: SafetensorsFile;
  try {
    file = SafetensorsFile.open(path);
  } catch (e) {
    throw new InvalidArgument(`cannot read LoRA file: ${(e as Error).message}`);
  }
  try {
    const groups = new Map<
      string,
      { component: LoraComponent; down?: LoraArray; up?: LoraArray; alpha?: number }
    >();
    const layouts = new Set<LoraLayout>();
    const unsupported = new Map<string, string[]>();
    for (const name of file.names()) {
      const c = classify(name);
      if ('unsupported' in c) {
        const list = unsupported.get(c.unsupported) ?? [];
        list.push(name);
        unsupported.set(c.unsupported, list);
        continue;
      }
      if (c.part !== 'alpha') layouts.add(c.layout);
      const g = groups.get(c.key) ?? { component: c.component };
      groups.set(c.key, g);
      const entry = file.entry(name);
      const data = file.readFloat32(name);
      if (c.part === 'alpha') {
        if (data.length !== 1) throw new InvalidArgument(`LoRA ${path}: ${name} should be a scalar`);
        g.alpha = data[0];
      } else {
        g[c.part] = { shape: [...entry.shape], data };
      }
    }
    if (unsupported.size > 0) {
      const parts = [...unsupported].map(
        ([why, names]) => `${why} (${names.length} tensors, e.g. ${names[0]})`,
      );
      throw new InvalidArgument(`LoRA ${path} is not supported: ${parts.join('; ')}`);
    }
    if (layouts.size === 0) throw new InvalidArgument(`LoRA ${path} contains no LoRA tensors`);
    if (layouts.size > 1) throw new InvalidArgument(`LoRA ${path} mixes layouts: ${[...layouts].join(', ')}`);
    const layout = [...layouts][0];
    const adapterConfig = layout === 'peft' ? readAdapterConfig(path) : null;
    const modules: LoraFileModule[] = [];
    for (const [key, g] of groups) {
      if (!g.down || !g.up) {
        throw new InvalidArgument(`LoRA ${path}: module ${key} has no ${g.down ? 'up' : 'down'} weight`);
      }
      const rank = g.down.shape[0];
      if (g.up.shape[1] !== rank || g.down.shape.length < 2 || g.up.shape.length < 2) {
        throw new InvalidArgument(
          `LoRA ${path}: module ${key} has mismatched down [${g.down.shape.join(', ')}] and up [${g.up.shape.join(', ')}]`,
        );
      }
      const alpha = g.alpha ?? peftAlpha(adapterConfig, key, rank);
      modules.push({ key, component: g.component, down: g.down, up: g.up, alpha });
    }
    return { layout, modules, metadata: { ...file.metadata }, source: path };
  } finally {
    file.close();
  }
}
