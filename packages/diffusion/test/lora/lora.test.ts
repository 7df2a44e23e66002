import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { InvalidArgument, NotFound } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LoraCache,
  type LoraFile,
  loraFileBytes,
  mergeLora,
  readLoraFile,
  resolveLoraPath,
} from '../../src/lora/index.js';
import { type TensorToWrite, writeSafetensors } from '../../src/weights/safetensors.js';
import { ArrayTarget, SnapshotArrayTarget, tinyTarget } from './array-target.js';
import { loraFixture, loraPairs, writeReferenceKohya } from './reference-lora.js';

/**
 * LoRA merge check against the reference (lora.json, see reference-lora.ts): the fused weights equal
 * W + s·(alpha/r)·up@down (to 1.5e-8 in diffusers); the same formula is recomputed here in float64.
 */
const fixture = loraFixture;
const pairs = loraPairs;
const writeKohya = writeReferenceKohya;

const dir = mkdtempSync(join(tmpdir(), 'tiffin-lora-'));
const figures: string[] = [];

/** Expected ΔW = s·(alpha/r)·up@down in float64. */
function expectedDelta(p: (typeof pairs)[number], factor: number): Float64Array {
  const r = fixture.rank;
  const out = p.shape[0];
  const inner = p.down.data.length / r;
  const d = new Float64Array(out * inner);
  for (let o = 0; o < out; o++)
    for (let i = 0; i < inner; i++) {
      let s = 0;
      for (let k = 0; k < r; k++) s += p.up.data[o * r + k] * p.down.data[k * inner + i];
      d[o * inner + i] = factor * s;
    }
  return d;
}

/** max |W_after - W_before - ΔW| over all fixture targets. */
function fusedError(target: ArrayTarget, before: Map<string, Float32Array>, factor: number): number {
  let worst = 0;
  for (const p of pairs) {
    const after = target.weights.get(p.weight)?.data as Float32Array;
    const base = before.get(p.weight) as Float32Array;
    const delta = expectedDelta(p, factor);
    for (let i = 0; i < delta.length; i++) worst = Math.max(worst, Math.abs(after[i] - base[i] - delta[i]));
  }
  return worst;
}

function maxDiff(target: ArrayTarget, before: Map<string, Float32Array>): number {
  let worst = 0;
  for (const [name, w] of target.weights) {
    const b = before.get(name) as Float32Array;
    for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(w.data[i] - b[i]));
  }
  return worst;
}

beforeAll(async () => {
  await tf.setBackend('cpu');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  console.log(`LoRA figures:\n${figures.join('\n')}`);
});

describe('kohya LoRA vs the reference merge (lora.json)', () => {
  const kohyaPath = writeKohya(join(dir, 'kohya.safetensors'));

  it('parses all 120 modules with alpha and metadata', () => {
    const file = readLoraFile(kohyaPath);
    expect(file.layout).toBe('kohya');
    expect(file.modules).toHaveLength(120);
    expect(file.metadata.ss_network_dim).toBe('4');
    expect(new Set(file.modules.map((m) => m.alpha))).toEqual(new Set([2]));
    expect(file.modules.filter((m) => m.component === 'text_encoder')).toHaveLength(12);
  });

  it('fuses exactly the fixture targets with W + s·alpha/r·up@down, unmerge restores bit-exactly', () => {
    const target = tinyTarget(() => new SnapshotArrayTarget());
    const before = target.clone();
    const applied = mergeLora(target, readLoraFile(kohyaPath), { scale: fixture.scale });
    expect(new Set(applied.weightNames)).toEqual(new Set(pairs.map((p) => p.weight)));
    expect(applied.unmatched).toEqual(fixture.not_applied);
    expect(applied.exactRestore).toBe(true);
    const err = fusedError(target, before, (fixture.scale * fixture.alpha) / fixture.rank);
    figures.push(`fused max abs error vs float64 formula: ${err.toExponential(2)}`);
    expect(err).toBeLessThanOrEqual(1e-7);
    // Untouched weights (norms, biases, conv_in, …) did not move.
    const touched = new Set(applied.weightNames);
    for (const [name, w] of target.weights) if (!touched.has(name)) expect(w.data).toEqual(before.get(name));
    applied.unmerge();
    applied.unmerge(); // idempotent
    expect(maxDiff(target, before)).toBe(0);
  });

  it('without snapshots, unmerge subtracts the delta (within 1e-6)', () => {
    const target = tinyTarget(() => new ArrayTarget());
    const before = target.clone();
    const applied = mergeLora(target, readLoraFile(kohyaPath), { scale: fixture.scale });
    expect(applied.exactRestore).toBe(false);
    applied.unmerge();
    const err = maxDiff(target, before);
    figures.push(`unmerge by subtraction max abs error: ${err.toExponential(2)}`);
    expect(err).toBeLessThanOrEqual(1e-6);
  });

  it('rolls back a merge that fails part-way', () => {
    const target = tinyTarget(() => new SnapshotArrayTarget());
    const before = target.clone();
    target.failAfter = 50;
    expect(() => mergeLora(target, readLoraFile(kohyaPath))).toThrow(/on purpose/);
    expect(maxDiff(target, before)).toBe(0);
  });
});

describe('diffusers and PEFT layouts fuse like kohya', () => {
  const factor = (fixture.scale * fixture.alpha) / fixture.rank;
  /** Layout B as the reference wrote it: up pre-multiplied by alpha/r, no alpha tensor. */
  const preScaledUp = (p: (typeof pairs)[number]) => ({
    shape: p.up.shape,
    data: p.up.data.map((v) => v * (fixture.alpha / fixture.rank)),
  });
  const dotted = (p: (typeof pairs)[number]) => p.weight.slice(0, -'.weight'.length);

  it('diffusers (lora.down / lora_linear_layer.down)', () => {
    const tensors: Record<string, TensorToWrite> = {};
    for (const p of pairs) {
      const infix = p.weight.startsWith('text_encoder.') ? 'lora_linear_layer' : 'lora';
      tensors[`${dotted(p)}.${infix}.down.weight`] = p.down;
      tensors[`${dotted(p)}.${infix}.up.weight`] = preScaledUp(p);
    }
    const path = join(dir, 'pytorch_lora_weights.safetensors');
    writeSafetensors(path, tensors);
    const file = readLoraFile(path);
    expect(file.layout).toBe('diffusers');
    const target = tinyTarget(() => new ArrayTarget());
    const before = target.clone();
    mergeLora(target, file, { scale: fixture.scale });
    const err = fusedError(target, before, factor);
    figures.push(`diffusers layout fused max abs error: ${err.toExponential(2)}`);
    expect(err).toBeLessThanOrEqual(1e-7);
  });

  it('PEFT (lora_A / lora_B, base_model.model. prefix, alpha from adapter_config.json)', () => {
    const peftDir = mkdtempSync(join(dir, 'peft-'));
    const tensors: Record<string, TensorToWrite> = {};
    for (const p of pairs.filter((q) => q.weight.startsWith('unet.'))) {
      const path = `base_model.model.${dotted(p).slice('unet.'.length)}`;
      tensors[`${path}.lora_A.weight`] = p.down;
      tensors[`${path}.lora_B.weight`] = p.up;
    }
    const path = join(peftDir, 'adapter_model.safetensors');
    writeSafetensors(path, tensors);
    writeFileSync(join(peftDir, 'adapter_config.json'), JSON.stringify({ r: 4, lora_alpha: 2 }));
    const file = readLoraFile(path);
    expect(file.layout).toBe('peft');
    const target = tinyTarget(() => new ArrayTarget());
    const before = target.clone();
    const applied = mergeLora(target, file, { scale: fixture.scale });
    expect(applied.weightNames).toHaveLength(108);
    let worst = 0;
    for (const p of pairs.filter((q) => q.weight.startsWith('unet.'))) {
      const after = target.weights.get(p.weight)?.data as Float32Array;
      const d = expectedDelta(p, factor);
      const b = before.get(p.weight) as Float32Array;
      for (let i = 0; i < d.length; i++) worst = Math.max(worst, Math.abs(after[i] - b[i] - d[i]));
    }
    expect(worst).toBeLessThanOrEqual(1e-7);
  });

  it('attention-processor form maps to_q_lora… onto to_q / q_proj', () => {
    const p = pairs.find((q) => q.weight.endsWith('attn2.to_out.0.weight')) as (typeof pairs)[number];
    const te = pairs.find((q) =>
      q.weight.endsWith('layers.1.self_attn.q_proj.weight'),
    ) as (typeof pairs)[number];
    const attn = dotted(p).slice(0, -'.to_out.0'.length);
    const layer = dotted(te).slice(0, -'.q_proj'.length);
    const path = join(dir, 'processor.safetensors');
    writeSafetensors(path, {
      [`${attn}.processor.to_out_lora.down.weight`]: p.down,
      [`${attn}.processor.to_out_lora.up.weight`]: p.up,
      [`${layer}.to_q_lora.down.weight`]: te.down,
      [`${layer}.to_q_lora.up.weight`]: te.up,
    });
    const file = readLoraFile(path);
    expect(file.layout).toBe('diffusers_processor');
    const applied = mergeLora(
      tinyTarget(() => new ArrayTarget()),
      file,
    );
    expect([...applied.weightNames].sort()).toEqual([p.weight, te.weight].sort());
  });
});

describe('bad LoRA files are reported clearly', () => {
  const one = pairs[0];
  it('unknown modules: error by default, skipped and listed on request', () => {
    const path = join(dir, 'unknown.safetensors');
    writeSafetensors(path, {
      [`${one.key}.lora_down.weight`]: one.down,
      [`${one.key}.lora_up.weight`]: one.up,
      'lora_unet_down_blocks_7_attentions_0_proj_in.lora_down.weight': one.down,
      'lora_unet_down_blocks_7_attentions_0_proj_in.lora_up.weight': one.up,
    });
    const file = readLoraFile(path);
    const target = tinyTarget(() => new SnapshotArrayTarget());
    const before = target.clone();
    expect(() => mergeLora(target, file)).toThrow(InvalidArgument);
    expect(() => mergeLora(target, file)).toThrow(
      /1 of 2 modules unmatched: lora_unet_down_blocks_7_attentions_0_proj_in \(no such layer/,
    );
    expect(maxDiff(target, before)).toBe(0);
    const applied = mergeLora(target, file, { onUnmatched: 'skip' });
    expect(applied.weightNames).toEqual([one.weight]);
    expect(applied.unmatched).toEqual([
      { key: 'lora_unet_down_blocks_7_attentions_0_proj_in', reason: 'no such layer in the base model' },
    ]);
  });

  it('shape mismatches are unmatched with the shapes named', () => {
    const path = join(dir, 'shape.safetensors');
    const wrong = { shape: [4, 7], data: new Float32Array(28) };
    writeSafetensors(path, { [`${one.key}.lora_down.weight`]: wrong, [`${one.key}.lora_up.weight`]: one.up });
    expect(() =>
      mergeLora(
        tinyTarget(() => new ArrayTarget()),
        readLoraFile(path),
      ),
    ).toThrow(/does not fit base weight/);
  });

  it('unsupported adapter kinds, LDM names, broken pairs and pickles are rejected', () => {
    const loha = join(dir, 'loha.safetensors');
    writeSafetensors(loha, { 'lora_unet_mid_block_attentions_0_proj_in.hada_w1_a': one.down });
    expect(() => readLoraFile(loha)).toThrow(/LoHa/);
    const ldm = join(dir, 'ldm.safetensors');
    writeSafetensors(ldm, { 'lora_unet_input_blocks_4_1_proj_in.lora_down.weight': one.down });
    expect(() => readLoraFile(ldm)).toThrow(/original-LDM/);
    const half = join(dir, 'half.safetensors');
    writeSafetensors(half, { [`${one.key}.lora_down.weight`]: one.down });
    expect(() => readLoraFile(half)).toThrow(/has no up weight/);
    expect(() => readLoraFile(join(dir, 'x.bin'))).toThrow(/safetensors/);
    expect(() => readLoraFile(join(dir, 'missing.safetensors'))).toThrow(InvalidArgument);
  });
});

describe('tensor targets and caching', () => {
  it('a merge/unmerge cycle frees every temporary tensor', () => {
    const path = writeKohya(join(dir, 'leak.safetensors'));
    const target = tinyTarget(() => new ArrayTarget());
    const file = readLoraFile(path);
    const before = tf.memory().numTensors;
    mergeLora(target, file).unmerge();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('LoraCache is an LRU keyed by path, revalidated by mtime and size', () => {
    let reads = 0;
    const cache = new LoraCache(2, (p) => {
      reads++;
      return readLoraFile(p);
    });
    const a = writeKohya(join(dir, 'a.safetensors'));
    const b = writeKohya(join(dir, 'b.safetensors'));
    const c = writeKohya(join(dir, 'c.safetensors'));
    const fa: LoraFile = cache.get(a);
    expect(cache.get(a)).toBe(fa);
    expect(reads).toBe(1);
    utimesSync(a, new Date(), new Date(Date.now() + 5000));
    expect(cache.get(a)).not.toBe(fa);
    expect(reads).toBe(2);
    cache.get(b);
    cache.get(a); // a is now most recent
    cache.get(c); // evicts b
    expect(cache.size).toBe(2);
    cache.get(a);
    expect(reads).toBe(4);
    cache.get(b);
    expect(reads).toBe(5);
  });

  it('LoraCache also bounds the bytes it holds, keeping the most recent file', () => {
    const a = writeKohya(join(dir, 'bytes-a.safetensors'));
    const b = writeKohya(join(dir, 'bytes-b.safetensors'));
    const one = loraFileBytes(readLoraFile(a));
    const cache = new LoraCache(10, readLoraFile, one * 1.5);
    cache.get(a);
    expect(cache.bytes).toBe(one);
    cache.get(b); // two files exceed 1.5 files' bytes: a goes
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(one);
    const small = new LoraCache(10, readLoraFile, 1);
    small.get(a); // larger than the limit alone: kept (it is in use), and the only one
    expect(small.size).toBe(1);
  });

  it('resolveLoraPath: absolute, relative to the LoRA dir, Hub refs and missing files', () => {
    const path = writeKohya(join(dir, 'style.safetensors'));
    expect(resolveLoraPath(path, '/nonexistent')).toBe(path);
    expect(resolveLoraPath('style.safetensors', dir)).toBe(path);
    expect(() => resolveLoraPath('user/repo/file.safetensors', dir)).toThrow(/Hub/);
    expect(() => resolveLoraPath('nope.safetensors', dir)).toThrow(NotFound);
  });
});
