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
import { tinyDir } from './helpers/tiny.js';

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
