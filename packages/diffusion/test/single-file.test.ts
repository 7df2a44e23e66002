import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ClipTextConfig, clipTextWeightSpecs } from '../src/architectures/clip-text.js';
import { unetWeightSpecs } from '../src/architectures/unet.js';
import type { UNetConfig } from '../src/architectures/unet-config.js';
import { type VaeConfig, vaeWeightSpecs } from '../src/architectures/vae.js';
import { assertNotPickle } from '../src/checkpoints/checkpoint-error.js';
import { openClipRef, unetLdmKey, vaeLdmKey } from '../src/checkpoints/ldm-keys.js';
import { SingleFileError, singleFileToDiffusers } from '../src/checkpoints/single-file.js';
import { sdxlTinyFolderConfigs } from '../src/tiny/sdxl-tiny-configs.js';
import { tinyConfigs } from '../src/tiny/tiny-configs.js';
import { detInput } from '../src/weights/deterministic.js';
import { SafetensorsFile, type TensorToWrite, writeSafetensors } from '../src/weights/safetensors.js';
import { maxAbsDiff } from './helpers/fixtures.js';
import { fixtureNoise, openTinyPipeline, tinyDir } from './helpers/tiny.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// SD 1.5's real LDM names (from the public v1-5-pruned checkpoint's key list), n = 2 resnets per level.
const SD_UP_ATTN = (i: number) => i > 0;
describe('LDM key mapping', () => {
  it('maps the UNet names as the original checkpoints store them', () => {
    const u = (n: string) => unetLdmKey(n, 2, SD_UP_ATTN).replace('model.diffusion_model.', '');
    expect(u('conv_in.weight')).toBe('input_blocks.0.0.weight');
    expect(u('time_embedding.linear_2.bias')).toBe('time_embed.2.bias');
    expect(u('down_blocks.0.resnets.1.conv2.weight')).toBe('input_blocks.2.0.out_layers.3.weight');
    expect(u('down_blocks.1.resnets.0.conv_shortcut.weight')).toBe('input_blocks.4.0.skip_connection.weight');
    expect(u('down_blocks.2.attentions.1.transformer_blocks.0.attn2.to_k.weight')).toBe(
      'input_blocks.8.1.transformer_blocks.0.attn2.to_k.weight',
    );
    expect(u('down_blocks.2.downsamplers.0.conv.weight')).toBe('input_blocks.9.0.op.weight');
    expect(u('down_blocks.3.resnets.1.time_emb_proj.weight')).toBe('input_blocks.11.0.emb_layers.1.weight');
    expect(u('mid_block.resnets.1.norm1.bias')).toBe('middle_block.2.in_layers.0.bias');
    expect(u('mid_block.attentions.0.proj_in.weight')).toBe('middle_block.1.proj_in.weight');
    expect(u('up_blocks.0.upsamplers.0.conv.weight')).toBe('output_blocks.2.1.conv.weight');
    expect(u('up_blocks.1.upsamplers.0.conv.bias')).toBe('output_blocks.5.2.conv.bias');
    expect(u('up_blocks.3.attentions.2.proj_out.weight')).toBe('output_blocks.11.1.proj_out.weight');
    expect(u('up_blocks.3.resnets.2.norm2.weight')).toBe('output_blocks.11.0.out_layers.0.weight');
    expect(u('conv_norm_out.weight')).toBe('out.0.weight');
  });

  it('maps the VAE (decoder levels numbered bottom-up) and OpenCLIP (fused q/k/v) names', () => {
    const v = (n: string) => vaeLdmKey(n, 4).replace('first_stage_model.', '');
    expect(v('encoder.down_blocks.1.resnets.0.conv_shortcut.weight')).toBe(
      'encoder.down.1.block.0.nin_shortcut.weight',
    );
    expect(v('encoder.down_blocks.2.downsamplers.0.conv.bias')).toBe('encoder.down.2.downsample.conv.bias');
    expect(v('decoder.up_blocks.0.resnets.2.conv1.weight')).toBe('decoder.up.3.block.2.conv1.weight');
    expect(v('decoder.up_blocks.2.upsamplers.0.conv.weight')).toBe('decoder.up.1.upsample.conv.weight');
    expect(v('decoder.mid_block.attentions.0.to_out.0.weight')).toBe('decoder.mid.attn_1.proj_out.weight');
    expect(v('encoder.mid_block.attentions.0.group_norm.bias')).toBe('encoder.mid.attn_1.norm.bias');
    expect(v('encoder.mid_block.resnets.1.norm2.weight')).toBe('encoder.mid.block_2.norm2.weight');
    expect(v('decoder.conv_norm_out.weight')).toBe('decoder.norm_out.weight');
    expect(v('quant_conv.weight')).toBe('quant_conv.weight');
    expect(openClipRef('text_model.encoder.layers.3.self_attn.k_proj.weight', 1024)).toEqual({
      key: 'cond_stage_model.model.transformer.resblocks.3.attn.in_proj_weight',
      rows: [1024, 2048],
    });
    expect(openClipRef('text_model.encoder.layers.0.mlp.fc2.bias', 1024).key).toBe(
      'cond_stage_model.model.transformer.resblocks.0.mlp.c_proj.bias',
    );
    expect(openClipRef('text_model.embeddings.position_embedding.weight', 1024).key).toBe(
      'cond_stage_model.model.positional_embedding',
    );
  });

  it('refuses pickles with the reason, and files that are not SD checkpoints', () => {
    for (const f of ['model.ckpt', 'x.PT', 'a.pth', 'pytorch_model.bin'])
      expect(() => assertNotPickle(f)).toThrow(/Python pickle .*executes code/);
    expect(() => singleFileToDiffusers('/nowhere/model.ckpt')).toThrow(SingleFileError);
    const refused = (() => {
      try {
        assertNotPickle('model.ckpt');
      } catch (e) {
        return e as SingleFileError;
      }
    })();
    expect([refused?.code, refused?.httpStatus]).toEqual(['PICKLE_REFUSED', 400]);
    const dir = mkdtempSync(join(tmpdir(), 'single-'));
    dirs.push(dir);
    const tok = tinyDir('sd1');
    dirs.push(tok);
    const path = join(dir, 'other.safetensors');
    writeFileSync(path, readFileSync(join(tok, 'vae', 'diffusion_pytorch_model.safetensors')));
    expect(() =>
      singleFileToDiffusers(path, { tokenizerDir: join(tok, 'tokenizer'), cacheDir: dir }),
    ).toThrow(/not an SD 1\.x\/2\.x\/XL checkpoint in the LDM\/SGM layout/);
    expect(() => singleFileToDiffusers(path, { cacheDir: dir })).toThrow(/carries no tokenizer/);
  });
});

/** The tiny folder's tensors re-keyed to the LDM layout in one file (the inverse of the conversion). */
function writeLdmCheckpoint(folder: string, flavour: 'sd1' | 'sd2', out: string): void {
  const c = tinyConfigs(flavour);
  const unet = c.unet as unknown as UNetConfig;
  const header: Record<string, unknown> = {};
  const chunks: Buffer[] = [];
  let offset = 0;
  const put = (key: string, dtype: string, shape: readonly number[], bytes: Uint8Array) => {
    header[key] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
    chunks.push(Buffer.from(bytes));
  };
  const copy = (file: string, specs: { name: string }[], key: (n: string) => string) => {
    const f = SafetensorsFile.open(join(folder, file));
    for (const s of specs)
      put(key(s.name), f.entry(s.name).dtype, f.entry(s.name).shape, f.readBytes(s.name));
    f.close();
  };
  const n = unet.layers_per_block as number;
  const upAttn = (i: number) => unet.up_block_types[i] === 'CrossAttnUpBlock2D';
  copy('unet/diffusion_pytorch_model.safetensors', unetWeightSpecs(unet), (name) =>
    unetLdmKey(name, n, upAttn),
  );
  const vae = c.vae as VaeConfig;
  copy('vae/diffusion_pytorch_model.safetensors', vaeWeightSpecs(vae), (name) =>
    vaeLdmKey(name, vae.block_out_channels.length),
  );
  const te = c.textEncoder as ClipTextConfig;
  const teSpecs = clipTextWeightSpecs(te);
  if (flavour === 'sd1') {
    copy('text_encoder/model.safetensors', teSpecs, (name) => `cond_stage_model.transformer.${name}`);
  } else {
    const f = SafetensorsFile.open(join(folder, 'text_encoder/model.safetensors'));
    const D = te.hidden_size;
    for (let i = 0; i <= te.num_hidden_layers; i++) {
      // One more OpenCLIP layer than diffusers keeps (SD 2 drops the last); its tensors repeat layer 0's.
      const src = i === te.num_hidden_layers ? 0 : i;
      for (const param of ['weight', 'bias']) {
        const parts = ['q_proj', 'k_proj', 'v_proj'].map((p) =>
          f.readBytes(`text_model.encoder.layers.${src}.self_attn.${p}.${param}`),
        );
        const shape = param === 'weight' ? [3 * D, D] : [3 * D];
        put(
          `cond_stage_model.model.transformer.resblocks.${i}.attn.in_proj_${param}`,
          'F32',
          shape,
          Buffer.concat(parts),
        );
      }
      for (const s of teSpecs.filter(
        (x) => x.name.startsWith(`text_model.encoder.layers.${src}.`) && !/[qkv]_proj/.test(x.name),
      ))
        put(
          openClipRef(s.name.replace(`layers.${src}.`, `layers.${i}.`), D).key,
          'F32',
          s.shape,
          f.readBytes(s.name),
        );
    }
    for (const s of teSpecs.filter((x) => !x.name.includes('.layers.')))
      put(openClipRef(s.name, D).key, 'F32', s.shape, f.readBytes(s.name));
    f.close();
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  writeFileSync(out, Buffer.concat([len, Buffer.from(json), ...chunks]));
}

for (const flavour of ['sd1', 'sd2'] as const) {
  it(`a ${flavour} LDM single file converts back to the diffusers folder it came from`, () => {
    const folder = tinyDir(flavour);
    dirs.push(folder);
    const file = join(folder, 'checkpoint.safetensors');
    writeLdmCheckpoint(folder, flavour, file);
    const cacheDir = join(folder, '.single');
    const out = singleFileToDiffusers(file, { tokenizerDir: join(folder, 'tokenizer'), cacheDir });
    expect(singleFileToDiffusers(file, { tokenizerDir: join(folder, 'tokenizer'), cacheDir })).toBe(out);
    for (const rel of [
      'unet/diffusion_pytorch_model.safetensors',
      'vae/diffusion_pytorch_model.safetensors',
      'text_encoder/model.safetensors',
    ]) {
      const a = SafetensorsFile.open(join(folder, rel));
      const b = SafetensorsFile.open(join(out, rel));
      expect(b.names().sort()).toEqual(a.names().sort());
      for (const name of a.names()) expect(Buffer.compare(b.readBytes(name), a.readBytes(name))).toBe(0);
      a.close();
      b.close();
    }
    const json = (rel: string) => JSON.parse(readFileSync(join(out, rel), 'utf8'));
    const c = tinyConfigs(flavour);
    const unet = json('unet/config.json');
    for (const k of [
      'block_out_channels',
      'down_block_types',
      'up_block_types',
      'cross_attention_dim',
      'layers_per_block',
    ])
      expect(unet[k]).toEqual((c.unet as Record<string, unknown>)[k]);
    expect(unet.use_linear_projection).toBe(flavour === 'sd2');
    expect(json('vae/config.json').layers_per_block).toBe(c.vae.layers_per_block);
    const te = json('text_encoder/config.json');
    expect([te.num_hidden_layers, te.hidden_act]).toEqual([
      c.textEncoder.num_hidden_layers,
      c.textEncoder.hidden_act,
    ]);
    expect(json('scheduler/scheduler_config.json').prediction_type).toBe(
      flavour === 'sd2' ? 'v_prediction' : 'epsilon',
    );
  });
}

/** The tiny SDXL folder's tensors under Stability's SGM names in one file (what SDXL single files hold). */
function writeSgmCheckpoint(
  folder: string,
  out: string,
  edit: (tensors: Record<string, TensorToWrite>) => void = () => {},
): void {
  const c = sdxlTinyFolderConfigs();
  const unet = c.unet as unknown as UNetConfig;
  const tensors: Record<string, TensorToWrite> = {};
  const copy = (file: string, specs: { name: string }[], key: (n: string) => string) => {
    const f = SafetensorsFile.open(join(folder, file));
    for (const s of specs)
      tensors[key(s.name)] = { shape: f.entry(s.name).shape, data: f.readFloat32(s.name) };
    f.close();
  };
  const upAttn = (i: number) => unet.up_block_types[i] === 'CrossAttnUpBlock2D';
  copy('unet/diffusion_pytorch_model.safetensors', unetWeightSpecs(unet), (name) =>
    unetLdmKey(name, unet.layers_per_block as number, upAttn),
  );
  const vae = c.vae as VaeConfig;
  copy('vae/diffusion_pytorch_model.safetensors', vaeWeightSpecs(vae), (name) => vaeLdmKey(name, 2));
  copy(
    'text_encoder/model.safetensors',
    clipTextWeightSpecs(c.textEncoder as ClipTextConfig),
    (name) => `conditioner.embedders.0.transformer.${name}`,
  );
  // OpenCLIP: q/k/v fused into in_proj, text_projection stored [hidden, projection] (diffusers: its transpose).
  const te2 = c.textEncoder2 as ClipTextConfig;
  const f = SafetensorsFile.open(join(folder, 'text_encoder_2/model.safetensors'));
  const P = 'conditioner.embedders.1.model.';
  const D = te2.hidden_size;
  for (let i = 0; i < te2.num_hidden_layers; i++)
    for (const param of ['weight', 'bias']) {
      const parts = ['q', 'k', 'v'].map((x) =>
        f.readFloat32(`text_model.encoder.layers.${i}.self_attn.${x}_proj.${param}`),
      );
      const data = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      for (const [k, p] of parts.entries()) data.set(p, k * p.length);
      tensors[`${P}transformer.resblocks.${i}.attn.in_proj_${param}`] = {
        shape: param === 'weight' ? [3 * D, D] : [3 * D],
        data,
      };
    }
  const projection = f.readFloat32('text_projection.weight');
  const E = te2.projection_dim as number;
  tensors[`${P}text_projection`] = {
    shape: [D, E],
    data: Float32Array.from({ length: D * E }, (_, k) => projection[(k % E) * D + Math.floor(k / E)]),
  };
  for (const s of clipTextWeightSpecs(te2, true).filter((x) => !/[qkv]_proj|text_projection/.test(x.name)))
    tensors[openClipRef(s.name, D, P).key] = { shape: s.shape, data: f.readFloat32(s.name) };
  tensors[`${P}logit_scale`] = { shape: [], data: Float32Array.of(4.6) };
  f.close();
  edit(tensors);
  writeSafetensors(out, tensors);
}

describe('SDXL single files (SGM key layout)', () => {
  it('maps the SGM names SDXL checkpoints use', () => {
    const u = (n: string) => unetLdmKey(n, 2, (i) => i < 2).replace('model.diffusion_model.', '');
    expect(u('add_embedding.linear_1.weight')).toBe('label_emb.0.0.weight');
    expect(u('add_embedding.linear_2.bias')).toBe('label_emb.0.2.bias');
    expect(u('down_blocks.2.attentions.1.transformer_blocks.9.attn2.to_k.weight')).toBe(
      'input_blocks.8.1.transformer_blocks.9.attn2.to_k.weight',
    );
    expect(u('up_blocks.0.upsamplers.0.conv.weight')).toBe('output_blocks.2.2.conv.weight');
    expect(u('up_blocks.1.upsamplers.0.conv.weight')).toBe('output_blocks.5.2.conv.weight');
    const P = 'conditioner.embedders.1.model.';
    expect(openClipRef('text_projection.weight', 1280, P)).toEqual({
      key: `${P}text_projection`,
      transpose: true,
    });
    expect(openClipRef('text_model.encoder.layers.31.self_attn.v_proj.bias', 1280, P)).toEqual({
      key: `${P}transformer.resblocks.31.attn.in_proj_bias`,
      rows: [2560, 3840],
    });
  });

  it("converts to the folder it came from: same tensors, configs read off the shapes, and the pipeline's image", async () => {
    const folder = tinyDir('sdxl');
    dirs.push(folder);
    const file = join(folder, 'sdxl-checkpoint.safetensors');
    writeSgmCheckpoint(folder, file);
    const cacheDir = join(folder, '.single');
    // Configs from the shapes (SDXL's rules: head size 64 and so on), the second tokenizer derived from the first.
    const inferred = singleFileToDiffusers(file, { cacheDir });
    const json = (rel: string) => JSON.parse(readFileSync(join(inferred, rel), 'utf8'));
    const c = sdxlTinyFolderConfigs();
    const unet = json('unet/config.json');
    for (const k of [
      'block_out_channels',
      'down_block_types',
      'up_block_types',
      'cross_attention_dim',
      'transformer_layers_per_block',
      'use_linear_projection',
      'addition_embed_type',
      'addition_time_embed_dim',
      'projection_class_embeddings_input_dim',
    ])
      expect([k, unet[k]]).toEqual([k, (c.unet as Record<string, unknown>)[k]]);
    expect(unet.attention_head_dim).toEqual([0.5, 1, 1]);
    const te2 = json('text_encoder_2/config.json');
    expect([
      te2.hidden_size,
      te2.projection_dim,
      te2.num_hidden_layers,
      te2.intermediate_size,
      te2.hidden_act,
    ]).toEqual([48, 40, 3, 96, 'gelu']);
    expect(json('text_encoder/config.json').hidden_size).toBe(32);
    expect(json('vae/config.json').scaling_factor).toBe(0.13025);
    expect(json('model_index.json')._class_name).toBe('StableDiffusionXLPipeline');
    expect(json('tokenizer_2/special_tokens_map.json').pad_token).toBe('!');
    for (const rel of [
      'unet/diffusion_pytorch_model.safetensors',
      'vae/diffusion_pytorch_model.safetensors',
      'text_encoder/model.safetensors',
      'text_encoder_2/model.safetensors',
    ]) {
      const a = SafetensorsFile.open(join(folder, rel));
      const b = SafetensorsFile.open(join(inferred, rel));
      expect(b.names().sort()).toEqual(a.names().sort());
      for (const name of a.names())
        expect([name, Buffer.compare(b.readBytes(name), a.readBytes(name))]).toEqual([name, 0]);
      a.close();
      b.close();
    }
    // Heads cannot be read off shapes: with the folder's configs the single file gives the folder's image.
    const converted = singleFileToDiffusers(file, { cacheDir, configDir: folder });
    const image = async (dir: string) => {
      const pipe = await openTinyPipeline(dir, 'onnxruntime');
      try {
        const out = await pipe.text2img({
          prompt: 'a photo of an astronaut riding a horse on mars',
          num_inference_steps: 2,
          latents: detInput('pipe/latents', [1, 4, 16, 16]),
          noise: fixtureNoise(),
          return_float: true,
        });
        return out.images[0].float as Float32Array;
      } finally {
        pipe.dispose();
      }
    };
    expect(maxAbsDiff(await image(folder), await image(converted))).toBe(0);
    expect(() => singleFileToDiffusers(file, { cacheDir, configDir: tinyDirFor('sd1') })).toThrow(
      /is an SDXL checkpoint but .* is not an SDXL folder/,
    );
    // Hostile files: an added embedding whose width fits no time-id embedding, a projection that is not a matrix.
    const hostile = join(folder, 'hostile.safetensors');
    writeSgmCheckpoint(folder, hostile, (t) => {
      t['model.diffusion_model.label_emb.0.0.weight'] = {
        shape: [128, 87],
        data: new Float32Array(128 * 87),
      };
    });
    expect(() => singleFileToDiffusers(hostile, { cacheDir })).toThrow(/label_emb.0.0 takes 87 inputs/);
    writeSgmCheckpoint(folder, hostile, (t) => {
      t['conditioner.embedders.1.model.text_projection'] = {
        shape: [48 * 40],
        data: new Float32Array(48 * 40),
      };
    });
    expect(() => singleFileToDiffusers(hostile, { cacheDir, configDir: folder })).toThrow(
      /text_projection is not a matrix/,
    );
  }, 120_000);
});

function tinyDirFor(flavour: 'sd1'): string {
  const d = tinyDir(flavour);
  dirs.push(d);
  return d;
}
