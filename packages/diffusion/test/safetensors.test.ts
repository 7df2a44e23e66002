import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { halfToFloat } from '../src/weights/dtype.js';
import { encodeSafetensors, SafetensorsFile, writeSafetensors } from '../src/weights/safetensors.js';

const dir = mkdtempSync(join(tmpdir(), 'st-'));

function rawFile(name: string, header: unknown, data: Buffer): string {
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat([len, Buffer.from(json), data]));
  return path;
}

describe('safetensors', () => {
  it('round-trips F32 and widens F16 / BF16', () => {
    const values = Float32Array.from([0, 1, -2.5, 65504, 1e-7, 3.140625]);
    const path = join(dir, 'rt.safetensors');
    writeSafetensors(
      path,
      {
        'b.f32': { shape: [2, 3], data: values },
        'a.f16': { shape: [6], data: values, dtype: 'F16' },
        'c.bf16': { shape: [3, 2], data: values, dtype: 'BF16' },
      },
      { note: 'x' },
    );
    const f = SafetensorsFile.open(path);
    expect(f.names().sort()).toEqual(['a.f16', 'b.f32', 'c.bf16']);
    expect(f.metadata).toEqual({ note: 'x' });
    expect([...f.readFloat32('b.f32')]).toEqual([...values]);
    expect(f.entry('a.f16').dtype).toBe('F16');
    const half = f.readFloat32('a.f16');
    expect(half[3]).toBe(65504);
    expect(half[2]).toBe(-2.5);
    expect(half[4]).toBeCloseTo(1.1920929e-7, 12); // subnormal half
    const bf = f.readFloat32('c.bf16');
    expect(bf[2]).toBe(-2.5);
    expect(bf[5]).toBe(3.140625);
    f.close();
  });

  it('converts half special values', () => {
    expect(halfToFloat(0x7c00)).toBe(Number.POSITIVE_INFINITY);
    expect(halfToFloat(0xfc00)).toBe(Number.NEGATIVE_INFINITY);
    expect(halfToFloat(0x7e00)).toBeNaN();
    expect(halfToFloat(0x0001)).toBe(2 ** -24);
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0x8000)).toBe(-0);
  });

  it('reads I64 (legacy position_ids) and scalars', () => {
    const data = Buffer.alloc(8 * 3 + 4);
    data.writeBigInt64LE(0n, 0);
    data.writeBigInt64LE(1n, 8);
    data.writeBigInt64LE(76n, 16);
    data.writeFloatLE(4, 24);
    const path = rawFile(
      'i64.safetensors',
      {
        ids: { dtype: 'I64', shape: [1, 3], data_offsets: [0, 24] },
        alpha: { dtype: 'F32', shape: [], data_offsets: [24, 28] },
      },
      data,
    );
    const f = SafetensorsFile.open(path);
    expect([...f.readFloat32('ids')]).toEqual([0, 1, 76]);
    expect([...f.readFloat32('alpha')]).toEqual([4]);
    f.close();
  });

  it('writes the header padded to 8 bytes with sorted names', () => {
    const buf = encodeSafetensors({
      z: { shape: [1], data: Float32Array.of(1) },
      a: { shape: [1], data: Float32Array.of(2) },
    });
    const n = Number(buf.readBigUInt64LE(0));
    expect(n % 8).toBe(0);
    const header = buf.subarray(8, 8 + n).toString();
    expect(header.indexOf('"a"')).toBeLessThan(header.indexOf('"z"'));
    expect(buf.length).toBe(8 + n + 8);
  });

  it('gives clear errors', () => {
    expect(() => SafetensorsFile.open(join(dir, 'nope.safetensors'))).toThrow(/not found/);
    const notJson = join(dir, 'bad.safetensors');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(4n);
    writeFileSync(notJson, Buffer.concat([len, Buffer.from('[1] ')]));
    expect(() => SafetensorsFile.open(notJson)).toThrow(/does not start with/);
    const tooLong = join(dir, 'long.safetensors');
    len.writeBigUInt64LE(1000n);
    writeFileSync(tooLong, Buffer.concat([len, Buffer.from('{}')]));
    expect(() => SafetensorsFile.open(tooLong)).toThrow(/runs past the end/);
    const unknown = rawFile(
      'dt.safetensors',
      { x: { dtype: 'Q4', shape: [1], data_offsets: [0, 1] } },
      Buffer.alloc(1),
    );
    expect(() => SafetensorsFile.open(unknown)).toThrow(/unknown dtype Q4/);
    const gap = rawFile(
      'gap.safetensors',
      { x: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } },
      Buffer.alloc(8),
    );
    expect(() => SafetensorsFile.open(gap)).toThrow(/does not start where/);
    const wrongSize = rawFile(
      'size.safetensors',
      { x: { dtype: 'F32', shape: [2], data_offsets: [0, 4] } },
      Buffer.alloc(4),
    );
    expect(() => SafetensorsFile.open(wrongSize)).toThrow(/shape needs 8/);
    const f = SafetensorsFile.open(
      rawFile('ok.safetensors', { x: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, Buffer.alloc(4)),
    );
    expect(() => f.readFloat32('y')).toThrow(/no tensor named y/);
    f.close();
  });
});
