import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLoraFile } from '../../src/lora/index.js';
import type { LoraMode, RequestLora } from '../../src/pipeline/types.js';
import { detInput } from '../../src/weights/deterministic.js';
import { type TensorToWrite, writeSafetensors } from '../../src/weights/safetensors.js';
import { type Full, fixture, maxAbsDiff } from '../helpers/fixtures.js';
import { fixtureNoise, type TinyEngine, tinyOnBothEngines } from '../helpers/tiny.js';

/**
 * LoRA on the tiny SDXL folder through the shared LoRA code: kohya `lora_unet_` / `lora_te1_` / `lora_te2_` keys and
 * the PEFT names `unet.` / `text_encoder.` / `text_encoder_2.`, on both engines, fused and unfused.
 */
const RANK = 2;
/** diffusers module path → [out, in] of the tiny SDXL weight (docs/spec/diffusion.md §11.1 "sdxl"). */
const TARGETS: Record<string, [string, number, number]> = {
  unet_attn2_k: ['unet.down_blocks.1.attentions.0.transformer_blocks.0.attn2.to_k', 64, 80],
  unet_add_embedding: ['unet.add_embedding.linear_1', 128, 88],
  te1_q: ['text_encoder.text_model.encoder.layers.0.self_attn.q_proj', 32, 32],
  te2_fc1: ['text_encoder_2.text_model.encoder.layers.1.mlp.fc1', 96, 48],
};
const KOHYA_PREFIX: Record<string, string> = {
  unet: 'lora_unet_',
  text_encoder: 'lora_te1_',
  text_encoder_2: 'lora_te2_',
};

/** One LoRA over `targets`, written in kohya (alpha = rank) or PEFT layout: the same deltas either way. */
function writeLora(path: string, layout: 'kohya' | 'peft', targets: readonly string[]): string {
  const tensors: Record<string, TensorToWrite> = {};
  for (const t of targets) {
    const [module, out, inp] = TARGETS[t];
    const down = { shape: [RANK, inp], data: detInput(`sdxl-lora/${t}.down`, [RANK, inp], 0.3) };
    const up = { shape: [out, RANK], data: detInput(`sdxl-lora/${t}.up`, [out, RANK], 0.3) };
    if (layout === 'peft') {
      tensors[`${module}.lora_A.weight`] = down;
      tensors[`${module}.lora_B.weight`] = up;
    } else {
      const dot = module.indexOf('.');
      const key = KOHYA_PREFIX[module.slice(0, dot)] + module.slice(dot + 1).replace(/\./g, '_');
      tensors[`${key}.lora_down.weight`] = down;
      tensors[`${key}.lora_up.weight`] = up;
      tensors[`${key}.alpha`] = { shape: [], data: Float32Array.of(RANK) };
    }
  }
  writeSafetensors(path, tensors);
  return path;
}

describe('SDXL LoRA (kohya te1/te2/unet and PEFT names) on both engines', () => {
  const tiny = tinyOnBothEngines('sdxl');
  const { pipes } = tiny;

  const image = async (backend: TinyEngine, lora?: RequestLora) => {
    const out = await pipes[backend].text2img({
      prompt: 'a photo of an astronaut riding a horse on mars',
      negative_prompt: 'painting',
      num_inference_steps: 3,
      latents: detInput('pipe/latents', [1, 4, 16, 16]),
      noise: fixtureNoise(),
      return_float: true,
      lora,
    });
    return out.images[0].float as Float32Array;
  };

  it('reaches every component: a LoRA on any one of unet, text_encoder, text_encoder_2 changes the image', async () => {
    const base = await image('onnxruntime');
    for (const t of Object.keys(TARGETS)) {
      const file = readLoraFile(writeLora(join(tiny.dir(), `only-${t}.safetensors`), 'kohya', [t]));
      expect(file.modules.map((m) => m.component)).toEqual([TARGETS[t][0].split('.')[0]]);
      expect(maxAbsDiff(base, await image('onnxruntime', { file }))).toBeGreaterThan(1e-4);
    }
  });

  for (const backend of ['onnxruntime', 'wasm'] as const)
    it(`${backend}: kohya and PEFT files give one image, fused and unfused alike, and the base comes back exactly`, async () => {
      const all = Object.keys(TARGETS);
      const kohya = readLoraFile(
        writeLora(join(tiny.dir(), `all-kohya-${backend}.safetensors`), 'kohya', all),
      );
      const peft = readLoraFile(writeLora(join(tiny.dir(), `all-peft-${backend}.safetensors`), 'peft', all));
      expect(kohya.layout).toBe('kohya');
      const base = await image(backend);
      const with_ = (file: typeof kohya, mode: LoraMode) => image(backend, { file, mode, scale: 0.8 });
      const fused = await with_(kohya, 'fused');
      expect(maxAbsDiff(base, fused)).toBeGreaterThan(1e-3);
      expect(maxAbsDiff(fused, await with_(kohya, 'unfused'))).toBeLessThan(1e-4);
      expect(maxAbsDiff(fused, await with_(peft, 'fused'))).toBeLessThan(1e-5);
      expect(maxAbsDiff(base, await image(backend))).toBe(0);
    });

  it("matches diffusers' SDXL models with the same deltas merged where the kohya names point, on both engines", async () => {
    // pipeline_sdxl_lora.json: reference/sdxl_lora_reference.py (diffusers 0.27 loads SDXL LoRAs only through PEFT, so
    // it merges the deltas into diffusers' modules by attribute path): proves te1/te2/unet names reach those modules.
    const ref = fixture('pipeline_sdxl_lora.json');
    expect(Object.keys(ref.targets).sort()).toEqual(Object.keys(TARGETS).sort());
    const file = readLoraFile(
      writeLora(join(tiny.dir(), 'reference.safetensors'), 'kohya', Object.keys(TARGETS)),
    );
    expect(file.modules.map((m) => m.key).sort()).toEqual(
      Object.values(ref.targets as Record<string, string>).sort(),
    );
    for (const engine of ['onnxruntime', 'wasm'] as const)
      for (const mode of ['fused', 'unfused'] as const) {
        const err = maxAbsDiff(await image(engine, { file, mode }), (ref.image_full as Full).data);
        console.info(
          `tiny SDXL LoRA ${engine} ${mode} vs diffusers (deltas merged): max abs err ${err.toExponential(2)}`,
        );
        expect(err).toBeLessThan(1e-4);
      }
  });
});
