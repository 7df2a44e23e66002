import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { SafetensorsFile } from '../weights/safetensors.js';
import type { WeightSpec } from '../weights/weight-spec.js';
import { SingleFileError } from './checkpoint-error.js';
import type { SourceRef } from './ldm-keys.js';

/** Copies the mapped tensors (raw bytes, row ranges sliced) into a diffusers-named safetensors file. */
export function writeComponent(
  f: SafetensorsFile,
  out: string,
  specs: readonly WeightSpec[],
  ref: (name: string) => SourceRef,
): void {
  const header: Record<string, unknown> = {};
  const parts: { name: string; ref: SourceRef; length: number }[] = [];
  let offset = 0;
  for (const s of [...specs].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const r = ref(s.name);
    if (!f.entries.has(r.key))
      throw new SingleFileError(
        `${basename(f.path)}: ${r.key} (for ${s.name}) is missing from the checkpoint`,
      );
    const e = f.entry(r.key);
    if (r.transpose && e.shape.length !== 2)
      throw new SingleFileError(
        `${basename(f.path)}: ${r.key} is not a matrix (shape [${e.shape.join(', ')}])`,
      );
    const bytes = e.end - e.begin;
    const length = r.rows ? (bytes / e.shape[0]) * (r.rows[1] - r.rows[0]) : bytes;
    const fileShape = r.rows
      ? [r.rows[1] - r.rows[0], ...e.shape.slice(1)]
      : r.transpose
        ? [e.shape[1], e.shape[0]]
        : e.shape;
    header[s.name] = { dtype: e.dtype, shape: fileShape, data_offsets: [offset, offset + length] };
    parts.push({ name: s.name, ref: r, length });
    offset += length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const chunks: Buffer[] = [len, Buffer.from(json)];
  writeFileSync(out, Buffer.concat(chunks));
  for (const p of parts) {
    const all = f.readBytes(p.ref.key);
    const e = f.entry(p.ref.key);
    const rowBytes = all.length / e.shape[0];
    const slice = p.ref.rows ? all.subarray(p.ref.rows[0] * rowBytes, p.ref.rows[1] * rowBytes) : all;
    writeFileSync(out, p.ref.transpose ? transposeBytes(slice, e.shape[0], e.shape[1]) : slice, {
      flag: 'a',
    });
  }
}

/** A row-major `[rows, cols]` matrix of any element size, transposed byte for byte. */
function transposeBytes(bytes: Uint8Array, rows: number, cols: number): Uint8Array {
  const size = bytes.length / (rows * cols);
  const out = new Uint8Array(bytes.length);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++)
      out.set(bytes.subarray((r * cols + c) * size, (r * cols + c + 1) * size), (c * rows + r) * size);
  return out;
}
