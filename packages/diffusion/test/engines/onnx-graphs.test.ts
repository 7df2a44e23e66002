import { mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataType, ProtoWriter } from '@tiffin/onnx';
import * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../src/engines/onnx/graph-builder.js';
import { loadOnnxComponents } from '../../src/engines/onnx/load.js';
import { writeSafetensors } from '../../src/weights/safetensors.js';
import { tinyDir } from '../helpers/tiny.js';

const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('protobuf wire format', () => {
  it('writes varints, negative int64s, floats and nested messages as protobuf does', () => {
    expect([...new ProtoWriter().int(1, 150).finish()]).toEqual([0x08, 0x96, 0x01]);
    expect([...new ProtoWriter().int(2, 300).finish()]).toEqual([0x10, 0xac, 0x02]);
    // int64 -1: ten bytes of two's complement.
    expect([...new ProtoWriter().int(3, -1).finish()]).toEqual([0x18, ...Array(9).fill(0xff), 0x01]);
    expect([...new ProtoWriter().float(2, 1).finish()]).toEqual([0x15, 0x00, 0x00, 0x80, 0x3f]);
    expect([...new ProtoWriter().string(1, 'é').finish()]).toEqual([0x0a, 0x02, 0xc3, 0xa9]);
    const inner = new ProtoWriter().int(1, 1);
    expect([...new ProtoWriter().message(7, inner).packedInts(8, [1, 2]).finish()]).toEqual([
      0x3a, 0x02, 0x08, 0x01, 0x42, 0x02, 0x01, 0x02,
    ]);
  });
});

describe('graph builder', () => {
  it('a built graph with an external weight runs on onnxruntime', async () => {
    const dir = tmp('onnx-graph-');
    const w = Float32Array.from([1, 2, 3, 4, 5, 6]); // Linear [out 2, in 3]
    const source = {
      has: (n: string) => n === 'fc.weight',
      shape: () => [2, 3],
      read: () => ({ shape: [2, 3], data: w }),
    };
    const g = new GraphBuilder('t', source, join(dir, 'weights.bin'));
    const x = g.input('x', DataType.FLOAT, ['batch', 3]);
    const y = g.node('MatMul', [x, g.weight('fc.weight', 'linear-t')]);
    g.output(g.node('Add', [y, g.scalar(0.5)]), 'y', DataType.FLOAT, ['batch', 2]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'model.onnx'), g.finish({ '': 17 }));
    const session = await ort.InferenceSession.create(join(dir, 'model.onnx'));
    const out = await session.run({
      x: new ort.Tensor('float32', Float32Array.from([1, 0, -1, 2, 2, 2]), [2, 3]),
    });
    expect([...(out.y.data as Float32Array)]).toEqual([1 - 3 + 0.5, 4 - 6 + 0.5, 12 + 0.5, 30 + 0.5]);
    await session.release();
  });
});

describe('graph cache and bad folders', () => {
  it('a second load takes the graphs from the cache; a changed weight file rebuilds', async () => {
    const dir = tinyDir('sd1');
    dirs.push(dir);
    const cacheDir = join(dir, '.graphs');
    const logs: string[] = [];
    const first = await loadOnnxComponents(dir, { cacheDir, log: (m) => logs.push(m) });
    expect(logs.filter((l) => / graph built in \d+ ms/.test(l))).toHaveLength(4);
    const built = readdirSync(cacheDir).sort();
    expect(built).toHaveLength(4);
    first.unet.dispose();
    logs.length = 0;
    await loadOnnxComponents(dir, { cacheDir, log: (m) => logs.push(m) });
    expect(logs.filter((l) => / graph from cache/.test(l))).toHaveLength(4);
    expect(readdirSync(cacheDir).sort()).toEqual(built);
    // A new mtime on the UNet file: only the UNet graph is rebuilt.
    const later = new Date(Date.now() + 5000);
    utimesSync(join(dir, 'unet', 'diffusion_pytorch_model.safetensors'), later, later);
    logs.length = 0;
    await loadOnnxComponents(dir, { cacheDir, log: (m) => logs.push(m) });
    expect(logs.filter((l) => / graph built in/.test(l)).map((l) => l.split(' ')[2])).toEqual(['unet']);
  });

  it('a wrong shape fails with both shapes named', async () => {
    const dir = tinyDir('sd1');
    dirs.push(dir);
    const { SafetensorsFile } = await import('../../src/weights/safetensors.js');
    const path = join(dir, 'text_encoder', 'model.safetensors');
    const f = SafetensorsFile.open(path);
    const tensors = Object.fromEntries(
      f.names().map((n) => [n, { shape: f.entry(n).shape, data: f.readFloat32(n) }] as const),
    );
    f.close();
    tensors['text_model.final_layer_norm.weight'] = { shape: [33], data: new Float32Array(33) };
    writeSafetensors(path, tensors);
    await expect(loadOnnxComponents(dir, { cacheDir: join(dir, '.graphs'), log: () => {} })).rejects.toThrow(
      /text_encoder: weight text_model\.final_layer_norm\.weight has shape \[33\], expected \[32\]/,
    );
  });

  it('a missing weight fails with the weight named, and leaves no half-built graph', async () => {
    const dir = tinyDir('sd1');
    dirs.push(dir);
    const cacheDir = join(dir, '.graphs');
    writeSafetensors(join(dir, 'vae', 'diffusion_pytorch_model.safetensors'), {
      'decoder.conv_in.weight': { shape: [1], data: new Float32Array(1) },
    });
    await expect(loadOnnxComponents(dir, { cacheDir, log: () => {} })).rejects.toThrow(
      /vae: weight encoder\.conv_in\.weight is missing/,
    );
    expect(readdirSync(cacheDir).filter((d) => d.includes('.tmp-'))).toEqual([]);
  });
});
