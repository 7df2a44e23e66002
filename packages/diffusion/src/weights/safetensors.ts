import { closeSync, fstatSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { ConfigError, floatBitsToHalf } from '@tiffin/core/internal';
import { bytesToFloat32, DTYPE_SIZES } from './dtype.js';

/** One entry of a safetensors header. */
export interface SafetensorsEntry {
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  /** Absolute byte offsets in the file. */
  readonly begin: number;
  readonly end: number;
}

/** A safetensors file that cannot be read (missing, truncated, invalid header). */
export class SafetensorsError extends ConfigError {
  static override readonly code: string = 'SAFETENSORS';
}

const MAX_HEADER = 100_000_000;

/**
 * A safetensors file read lazily: the header at open, each tensor by offset on demand, so a
 * multi-GB checkpoint never lives in one Buffer (docs/spec/diffusion.md §2, memory note).
 */
export class SafetensorsFile {
  readonly entries: ReadonlyMap<string, SafetensorsEntry>;
  readonly metadata: Readonly<Record<string, string>>;
  private fd: number | null;

  private constructor(
    readonly path: string,
    fd: number,
    entries: Map<string, SafetensorsEntry>,
    metadata: Record<string, string>,
  ) {
    this.fd = fd;
    this.entries = entries;
    this.metadata = metadata;
  }

  static open(path: string): SafetensorsFile {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new SafetensorsError(
        code === 'ENOENT' ? `safetensors file not found: ${path}` : `cannot open ${path}: ${code}`,
      );
    }
    try {
      const { entries, metadata } = parseHeader(fd, path);
      return new SafetensorsFile(path, fd, entries, metadata);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Raw little-endian bytes of one tensor. */
  readBytes(name: string): Uint8Array {
    const e = this.entry(name);
    const buf = Buffer.alloc(e.end - e.begin);
    let done = 0;
    while (done < buf.length) {
      const n = readSync(this.openFd(), buf, done, buf.length - done, e.begin + done);
      if (n === 0) throw new SafetensorsError(`${this.path}: unexpected end of file reading ${name}`);
      done += n;
    }
    return buf;
  }

  /** One tensor widened to float32 (F16/BF16/ints converted). */
  readFloat32(name: string): Float32Array {
    return bytesToFloat32(this.readBytes(name), this.entry(name).dtype);
  }

  entry(name: string): SafetensorsEntry {
    const e = this.entries.get(name);
    if (!e) throw new SafetensorsError(`${this.path}: no tensor named ${name}`);
    return e;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private openFd(): number {
    if (this.fd === null) throw new SafetensorsError(`${this.path} is closed`);
    return this.fd;
  }
}

function parseHeader(
  fd: number,
  path: string,
): { entries: Map<string, SafetensorsEntry>; metadata: Record<string, string> } {
  const size = fstatSync(fd).size;
  const bad = (why: string) => new SafetensorsError(`${path}: invalid safetensors header: ${why}`);
  if (size < 8) throw bad('file shorter than 8 bytes');
  const lenBuf = Buffer.alloc(8);
  readSync(fd, lenBuf, 0, 8, 0);
  const n = Number(lenBuf.readBigUInt64LE(0));
  if (n > MAX_HEADER) throw bad(`header length ${n} exceeds 100 MB`);
  if (8 + n > size) throw bad(`header length ${n} runs past the end of the file (${size} bytes)`);
  const hb = Buffer.alloc(n);
  readSync(fd, hb, 0, n, 8);
  const text = hb.toString('utf8');
  if (!text.startsWith('{')) throw bad('header does not start with "{"');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw bad(`JSON does not parse (${(e as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw bad('not a JSON object');
  const entries = new Map<string, SafetensorsEntry>();
  let metadata: Record<string, string> = {};
  const base = 8 + n;
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = (raw ?? {}) as Record<string, string>;
      continue;
    }
    const v = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof v?.dtype !== 'string') throw bad(`tensor ${name} has no dtype`);
    const itemSize = DTYPE_SIZES[v.dtype];
    if (itemSize === undefined) throw bad(`tensor ${name} has unknown dtype ${v.dtype}`);
    if (!Array.isArray(v.shape) || !v.shape.every((d) => Number.isInteger(d) && d >= 0))
      throw bad(`tensor ${name} has an invalid shape`);
    const off = v.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isInteger(d) && d >= 0))
      throw bad(`tensor ${name} has invalid data_offsets`);
    const shape = v.shape as number[];
    const count = shape.reduce((a, b) => a * b, 1);
    if (off[1] - off[0] !== count * itemSize)
      throw bad(
        `tensor ${name}: data_offsets cover ${off[1] - off[0]} bytes, shape needs ${count * itemSize}`,
      );
    entries.set(name, { name, dtype: v.dtype, shape, begin: base + off[0], end: base + off[1] });
  }
  // The data buffer must be covered exactly, without gaps or overlaps.
  const sorted = [...entries.values()].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = base;
  for (const e of sorted) {
    if (e.begin !== pos) throw bad(`tensor ${e.name} does not start where the previous one ends`);
    pos = e.end;
  }
  if (pos !== size) throw bad(`data buffer ends at ${pos} but the file has ${size} bytes`);
  return { entries, metadata };
}

/** A tensor to write: float32 data (written as F32 unless dtype says F16/BF16). */
export interface TensorToWrite {
  readonly shape: readonly number[];
  readonly data: Float32Array;
  readonly dtype?: 'F32' | 'F16' | 'BF16';
}

/** Little-endian bytes of float32 data stored as `dtype` (typed-array passes: GB-sized files stay fast). */
function tensorBytes(data: Float32Array, dtype: 'F32' | 'F16' | 'BF16'): Buffer {
  const bits = new Uint32Array(Float32Array.from(data).buffer);
  if (dtype === 'F32') {
    const bytes = Buffer.alloc(data.length * 4);
    for (let i = 0; i < data.length; i++) bytes.writeUInt32LE(bits[i], i * 4);
    return bytes;
  }
  const bytes = Buffer.alloc(data.length * 2);
  for (let i = 0; i < data.length; i++)
    bytes.writeUInt16LE(dtype === 'F16' ? floatBitsToHalf(bits[i]) : bits[i] >>> 16, i * 2);
  return bytes;
}

/** The 8-byte length and the space-padded JSON header. */
function headerBytes(header: Record<string, unknown>): Buffer {
  let json = JSON.stringify(header);
  const pad = (8 - (Buffer.byteLength(json) % 8)) % 8;
  json += ' '.repeat(pad);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([len, Buffer.from(json, 'utf8')]);
}

/** Serialise tensors the way the reference writer does (sorted names, space-padded header). */
export function encodeSafetensors(
  tensors: Readonly<Record<string, TensorToWrite>>,
  metadata?: Readonly<Record<string, string>>,
): Buffer {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  const chunks: Buffer[] = [];
  let offset = 0;
  for (const name of names) {
    const t = tensors[name];
    const dtype = t.dtype ?? 'F32';
    const bytes = tensorBytes(t.data, dtype);
    header[name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
    chunks.push(bytes);
  }
  return Buffer.concat([headerBytes(header), ...chunks]);
}

export function writeSafetensors(
  path: string,
  tensors: Readonly<Record<string, TensorToWrite>>,
  metadata?: Readonly<Record<string, string>>,
): void {
  writeFileSync(path, encodeSafetensors(tensors, metadata));
}

/**
 * Writes a safetensors file one tensor at a time (`data(name)` is called once per tensor, in name
 * order), for files too large to assemble in memory, such as SD1.5-sized test models.
 */
export function writeSafetensorsStreamed(
  path: string,
  entries: readonly { name: string; shape: readonly number[] }[],
  dtype: 'F32' | 'F16' | 'BF16',
  data: (name: string) => Float32Array,
): void {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const size = dtype === 'F32' ? 4 : 2;
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const e of sorted) {
    const n = e.shape.reduce((a, b) => a * b, 1) * size;
    header[e.name] = { dtype, shape: e.shape, data_offsets: [offset, offset + n] };
    offset += n;
  }
  const fd = openSync(path, 'w');
  try {
    const write = (b: Buffer) => {
      for (let done = 0; done < b.length; ) done += writeSync(fd, b, done, b.length - done);
    };
    write(headerBytes(header));
    for (const e of sorted) write(tensorBytes(data(e.name), dtype));
  } finally {
    closeSync(fd);
  }
}
