import { detInput } from '../../src/weights/deterministic.js';
import { type TensorToWrite, writeSafetensors } from '../../src/weights/safetensors.js';
import { fixture as loadFixture, type Summary } from '../helpers/fixtures.js';

/**
 * The reference LoRA of lora.json (docs/spec/diffusion.md §9.3 and 13): rank 4, alpha 2, kohya keys for 120 UNet /
 * text-encoder layers of the tiny sd1 pipeline, tensors det_input("lora/<kohya key>.down" | ".up",
 * shape, 0.05). The fixture stores which modules diffusers fused (all 120), the fused-weight errors,
 * and three tiny-pipeline image summaries: without LoRA, fused at `scale` 0.8, and applied at scale 1
 * through diffusers' unfused (LoRA layer) path.
 */
export interface LoraFixture {
  alpha: number;
  rank: number;
  scale: number;
  not_applied: string[];
  targets: Record<string, { module: string; shape: number[] }>;
  image_base: Summary;
  'image_fused_scale0.8': Summary;
  image_lora_scale1_unfused_path: Summary;
}
export const loraFixture = loadFixture('lora.json') as LoraFixture;

/** Base weight name (`unet.<P>.weight`) of a fixture target. */
function weightName(module: string): string {
  const [component, path] = module.split(':');
  return `${component === 'te' ? 'text_encoder' : 'unet'}.${path}.weight`;
}

/** down [r, in(, kh, kw)], up [out, r(, 1, 1)] for a weight shape. */
function pairShapes(shape: number[], r: number): { down: number[]; up: number[] } {
  return shape.length === 4
    ? { down: [r, shape[1], shape[2], shape[3]], up: [shape[0], r, 1, 1] }
    : { down: [r, shape[1]], up: [shape[0], r] };
}

/** The fixture's low-rank pairs, torch layout, with their kohya key and base weight name. */
export const loraPairs = Object.entries(loraFixture.targets).map(([key, t]) => {
  const { down, up } = pairShapes(t.shape, loraFixture.rank);
  return {
    key,
    module: t.module,
    weight: weightName(t.module),
    shape: t.shape,
    down: { shape: down, data: detInput(`lora/${key}.down`, down, 0.05) },
    up: { shape: up, data: detInput(`lora/${key}.up`, up, 0.05) },
  };
});
export type LoraPair = (typeof loraPairs)[number];

/** Writes the reference LoRA as a kohya safetensors file (F16 alpha, sd-scripts metadata). */
export function writeReferenceKohya(path: string, extra: Record<string, TensorToWrite> = {}): string {
  const tensors: Record<string, TensorToWrite> = { ...extra };
  for (const p of loraPairs) {
    tensors[`${p.key}.lora_down.weight`] = p.down;
    tensors[`${p.key}.lora_up.weight`] = p.up;
    tensors[`${p.key}.alpha`] = { shape: [], data: Float32Array.of(loraFixture.alpha), dtype: 'F16' };
  }
  writeSafetensors(path, tensors, {
    ss_network_dim: String(loraFixture.rank),
    ss_network_alpha: String(loraFixture.alpha),
  });
  return path;
}
