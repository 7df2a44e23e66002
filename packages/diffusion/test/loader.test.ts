import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../src/backend.js';
import { loadComponents } from '../src/pipeline/components.js';
import { writeTinyPipeline } from '../src/tiny/write-tiny-pipeline.js';
import { detWeight, fnv1a32 } from '../src/weights/deterministic.js';
import { SafetensorsFile, type TensorToWrite, writeSafetensors } from '../src/weights/safetensors.js';
import { fixture } from './helpers/fixtures.js';
import { openTinyPipeline, tinyDir } from './helpers/tiny.js';

describe('diffusers folder loader', () => {
  let dir: string;
  beforeAll(async () => {
    await selectBackend('wasm', () => {});
    dir = tinyDir('sd1');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the tiny pipeline with the spec tensor counts and deterministic weights', () => {
    const count = (p: string) => SafetensorsFile.open(join(dir, p)).names().length;
    expect(count('unet/diffusion_pytorch_model.safetensors')).toBe(304);
    expect(count('vae/diffusion_pytorch_model.safetensors')).toBe(124);
    expect(count('text_encoder/model.safetensors')).toBe(36);
    const probes = fixture('pipeline_sd1.json').weight_probes as Record<
      string,
      { first: number[]; fnv1a32: number; shape: number[] }
    >;
    for (const [key, probe] of Object.entries(probes)) {
      const [component, ...rest] = key.split('/');
      const name = rest.join('/');
      expect(fnv1a32(name)).toBe(probe.fnv1a32);
      const file =
        component === 'text_encoder'
          ? 'text_encoder/model.safetensors'
          : `${component}/diffusion_pytorch_model.safetensors`;
      const f = SafetensorsFile.open(join(dir, file));
      expect(f.entry(name).shape).toEqual(probe.shape);
      expect([...f.readFloat32(name).slice(0, probe.first.length)]).toEqual(probe.first.map(Math.fround));
      f.close();
    }
  });

  it('loads F16 weights widened to float32', () => {
    const d16 = writeTinyPipeline(`${dir}-f16`, { flavour: 'sd1', dtype: 'F16' });
    const c = loadComponents(d16);
    const w = c.unet.weights.readTorch('conv_in.bias');
    const exact = detWeight('conv_in.bias', [32]);
    for (let i = 0; i < 32; i++) expect(Math.abs(w[i] - exact[i])).toBeLessThan(1e-4);
    c.unet.dispose();
    c.vae.dispose();
    c.textEncoder.dispose();
    rmSync(d16, { recursive: true, force: true });
  });

  it('names a missing file, an unknown class, a missing weight and a shape mismatch', () => {
    const index = join(dir, 'model_index.json');
    const original = readFileSync(index, 'utf8');
    try {
      writeFileSync(index, original.replace('"UNet2DConditionModel"', '"UNetSpatioTemporalModel"'));
      expect(() => loadComponents(dir)).toThrow(/unet class UNetSpatioTemporalModel is not supported/);
    } finally {
      writeFileSync(index, original);
    }
    const te = join(dir, 'text_encoder/model.safetensors');
    renameSync(te, `${te}.away`);
    try {
      expect(() => loadComponents(dir)).toThrow(/weight file not found: .*text_encoder\/model.safetensors/);
      writeFileSync(join(dir, 'text_encoder/model.bin'), 'pickle');
      expect(() => loadComponents(dir)).toThrow(/safetensors required/);
      rmSync(join(dir, 'text_encoder/model.bin'));
    } finally {
      renameSync(`${te}.away`, te);
    }
    const vaePath = join(dir, 'vae/diffusion_pytorch_model.safetensors');
    const backup = readFileSync(vaePath);
    try {
      const f = SafetensorsFile.open(vaePath);
      const tensors: Record<string, TensorToWrite> = {};
      for (const n of f.names()) tensors[n] = { shape: f.entry(n).shape, data: f.readFloat32(n) };
      f.close();
      tensors['decoder.conv_in.weight'] = { shape: [64, 4, 1, 1], data: new Float32Array(256) };
      writeSafetensors(vaePath, tensors);
      expect(() => loadComponents(dir)).toThrow(
        'vae: weight decoder.conv_in.weight has shape [64, 4, 1, 1], expected [64, 4, 3, 3]',
      );
      delete tensors['decoder.conv_in.weight'];
      writeSafetensors(vaePath, tensors);
      expect(() => loadComponents(dir)).toThrow(/vae: weight decoder.conv_in.weight is missing/);
    } finally {
      writeFileSync(vaePath, backup);
    }
    expect(() => loadComponents(join(dir, 'nowhere'))).toThrow(/model_index.json not found/);
  });

  it('renames legacy VAE attention weights (query/key/value/proj_attn, 1×1 conv shaped)', () => {
    const vaePath = join(dir, 'vae/diffusion_pytorch_model.safetensors');
    const backup = readFileSync(vaePath);
    try {
      const f = SafetensorsFile.open(vaePath);
      const tensors: Record<string, TensorToWrite> = {};
      const legacy: Record<string, string> = {
        to_q: 'query',
        to_k: 'key',
        to_v: 'value',
        'to_out.0': 'proj_attn',
      };
      for (const n of f.names()) {
        const m = /^(.*attentions\.0)\.(to_q|to_k|to_v|to_out\.0)\.(weight|bias)$/.exec(n);
        const shape = f.entry(n).shape;
        if (m)
          tensors[`${m[1]}.${legacy[m[2]]}.${m[3]}`] = {
            shape: m[3] === 'weight' ? [...shape, 1, 1] : shape,
            data: f.readFloat32(n),
          };
        else tensors[n] = { shape, data: f.readFloat32(n) };
      }
      f.close();
      writeSafetensors(vaePath, tensors);
      const c = loadComponents(dir);
      expect([...c.vae.weights.readTorch('decoder.mid_block.attentions.0.to_q.weight')]).toEqual([
        ...detWeight('decoder.mid_block.attentions.0.to_q.weight', [64, 64]),
      ]);
      expect(c.unexpectedWeights.vae).toEqual([]);
      c.unet.dispose();
      c.vae.dispose();
      c.textEncoder.dispose();
      expect(tf.memory().numTensors).toBeGreaterThanOrEqual(0);
    } finally {
      writeFileSync(vaePath, backup);
    }
  });
});

describe('SDXL folder loader: incomplete and hostile folders are refused by name, nothing allocated', () => {
  let dir: string;
  beforeAll(async () => {
    await selectBackend('wasm', () => {});
    dir = tinyDir('sdxl');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Run `check` with one JSON file of the folder edited, then put it back. */
  const withJson = (rel: string, edit: (json: Record<string, unknown>) => void, check: () => void) => {
    const path = join(dir, rel);
    const original = readFileSync(path, 'utf8');
    const json = JSON.parse(original) as Record<string, unknown>;
    edit(json);
    writeFileSync(path, JSON.stringify(json));
    try {
      check();
    } finally {
      writeFileSync(path, original);
    }
  };
  const onnx = (): Promise<unknown> => openTinyPipeline(dir, 'onnxruntime');

  it('loads the tiny SDXL folder with both encoders (text_encoder_2 with its projection)', () => {
    const c = loadComponents(dir);
    expect(c.sdxl?.forceZerosForEmptyPrompt).toBe(true);
    expect(c.sdxl?.textEncoder2.weights.has('text_projection.weight')).toBe(true);
    expect(c.unexpectedWeights.text_encoder_2).toEqual([]);
    for (const m of [c.unet, c.vae, c.textEncoder, c.sdxl?.textEncoder2]) m?.dispose();
  });

  it('missing text_encoder_2 (index entry, folder, weights) or tokenizer_2', async () => {
    withJson(
      'model_index.json',
      (j) => {
        delete j.text_encoder_2;
      },
      () =>
        expect(() => loadComponents(dir)).toThrow(
          /text_time embedding but model_index.json has no text_encoder_2/,
        ),
    );
    withJson(
      'model_index.json',
      (j) => {
        j.text_encoder = [null, null];
      },
      () => expect(() => loadComponents(dir)).toThrow(/SDXL refiner folders are not supported/),
    );
    withJson(
      'model_index.json',
      (j) => {
        j.text_encoder_2 = ['transformers', 'T5EncoderModel'];
      },
      () => expect(() => loadComponents(dir)).toThrow(/text_encoder_2 class T5EncoderModel is not supported/),
    );
    withJson(
      'model_index.json',
      (j) => {
        delete j.tokenizer_2;
      },
      () => expect(() => loadComponents(dir)).toThrow(/model_index.json has no tokenizer_2 component/),
    );
    const te2 = join(dir, 'text_encoder_2');
    renameSync(te2, `${te2}.away`);
    try {
      expect(() => loadComponents(dir)).toThrow(/text_encoder_2\/config.json not found/);
      await expect(onnx()).rejects.toThrow(/text_encoder_2\/config.json not found/);
    } finally {
      renameSync(`${te2}.away`, te2);
    }
    const weights = join(te2, 'model.safetensors');
    renameSync(weights, `${weights}.away`);
    try {
      expect(() => loadComponents(dir)).toThrow(/weight file not found: .*text_encoder_2\/model.safetensors/);
      await expect(onnx()).rejects.toThrow(/text_encoder_2\/model.safetensors/);
    } finally {
      renameSync(`${weights}.away`, weights);
    }
  });

  it("a cross_attention_dim or added-embedding width that is not the encoders' is refused before any weight", async () => {
    withJson(
      'unet/config.json',
      (j) => {
        j.cross_attention_dim = 64;
      },
      () =>
        expect(() => loadComponents(dir)).toThrow(
          /cross_attention_dim 64 is not the encoders' hidden sizes 32 \+ 48/,
        ),
    );
    withJson(
      'unet/config.json',
      (j) => {
        j.projection_class_embeddings_input_dim = 2816;
      },
      () => expect(() => loadComponents(dir)).toThrow(/projection_class_embeddings_input_dim 2816/),
    );
    withJson(
      'unet/config.json',
      (j) => {
        j.addition_time_embed_dim = 7.5;
        j.projection_class_embeddings_input_dim = 85;
      },
      () =>
        expect(() => loadComponents(dir)).toThrow(/addition_time_embed_dim must be a positive even integer/),
    );
    withJson(
      'unet/config.json',
      (j) => {
        j.addition_embed_type = null;
      },
      () => expect(() => loadComponents(dir)).toThrow(/needs addition_embed_type "text_time"/),
    );
    withJson(
      'text_encoder_2/config.json',
      (j) => {
        j.projection_dim = 'wide';
      },
      () => expect(() => loadComponents(dir)).toThrow(/projection_dim must be a positive integer/),
    );
  });

  it('huge declared widths with small weights: a shape mismatch, not an allocation', async () => {
    const huge = 2 ** 40;
    const edits = (check: () => Promise<void> | void) => async () => {
      const te2 = join(dir, 'text_encoder_2/config.json');
      const unet = join(dir, 'unet/config.json');
      const [t, u] = [readFileSync(te2, 'utf8'), readFileSync(unet, 'utf8')];
      writeFileSync(te2, JSON.stringify({ ...JSON.parse(t), hidden_size: huge, intermediate_size: huge }));
      writeFileSync(unet, JSON.stringify({ ...JSON.parse(u), cross_attention_dim: 32 + huge }));
      try {
        await check();
      } finally {
        writeFileSync(te2, t);
        writeFileSync(unet, u);
      }
    };
    const before = process.memoryUsage().rss;
    await edits(() => {
      expect(() => loadComponents(dir)).toThrow(/text_encoder_2: weight .* has shape \[.*\], expected/);
    })();
    await edits(async () => {
      await expect(onnx()).rejects.toThrow(/text_encoder_2: weight .* has shape \[.*\], expected/);
    })();
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 ** 2);
  });
});
