/** Conversions of safetensors element types to float32 (tfjs has no 16-bit floats). */

import { floatBitsToHalf } from '@tiffin/core/internal';

const f16Table = (() => {
  // Lookup of all 65536 half values: cheap (256 KiB) and fast for multi-GB fp16 files.
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const mant = h & 0x3ff;
    if (exp === 0) table[h] = sign * mant * 2 ** -24;
    else if (exp === 31) table[h] = mant === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
    else table[h] = sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return table;
})();

export type SafetensorsDtype =
  | 'BOOL'
  | 'U8'
  | 'I8'
  | 'I16'
  | 'U16'
  | 'F16'
  | 'BF16'
  | 'I32'
  | 'U32'
  | 'F32'
  | 'F64'
  | 'I64'
  | 'U64';

export const DTYPE_SIZES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
};

export function halfToFloat(bits: number): number {
  return f16Table[bits & 0xffff];
}

/** Widen raw little-endian bytes of `dtype` to a Float32Array. */
export function bytesToFloat32(bytes: Uint8Array, dtype: string): Float32Array {
  const n = bytes.byteLength / (DTYPE_SIZES[dtype] ?? 1);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(n);
  switch (dtype) {
    case 'F32':
      for (let i = 0; i < n; i++) out[i] = view.getFloat32(i * 4, true);
      return out;
    case 'F16':
      for (let i = 0; i < n; i++) out[i] = f16Table[view.getUint16(i * 2, true)];
      return out;
    case 'BF16': {
      const u32 = new Uint32Array(n);
      for (let i = 0; i < n; i++) u32[i] = view.getUint16(i * 2, true) << 16;
      return new Float32Array(u32.buffer);
    }
    case 'F64':
      for (let i = 0; i < n; i++) out[i] = view.getFloat64(i * 8, true);
      return out;
    case 'I64':
      for (let i = 0; i < n; i++) out[i] = Number(view.getBigInt64(i * 8, true));
      return out;
    case 'U64':
      for (let i = 0; i < n; i++) out[i] = Number(view.getBigUint64(i * 8, true));
      return out;
    case 'I32':
      for (let i = 0; i < n; i++) out[i] = view.getInt32(i * 4, true);
      return out;
    case 'U32':
      for (let i = 0; i < n; i++) out[i] = view.getUint32(i * 4, true);
      return out;
    case 'I16':
      for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true);
      return out;
    case 'U16':
      for (let i = 0; i < n; i++) out[i] = view.getUint16(i * 2, true);
      return out;
    case 'I8':
      for (let i = 0; i < n; i++) out[i] = view.getInt8(i);
      return out;
    case 'U8':
    case 'BOOL':
      for (let i = 0; i < n; i++) out[i] = view.getUint8(i);
      return out;
    default:
      throw new Error(`safetensors dtype ${dtype} is not supported`);
  }
}

/** float32 values as IEEE half bits (round-to-nearest-even; beyond ±65504 becomes ±Infinity). */
export function float32ToHalf(data: Float32Array): Uint16Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < data.length; i++) out[i] = floatBitsToHalf(bits[i]);
  return out;
}
