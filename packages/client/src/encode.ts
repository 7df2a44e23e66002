import { TiffinClientError } from './errors.js';
import type { WireForm } from './schema.js';
import type { ReplayableBody } from './transport.js';
import type { TableRow } from './wire.js';

/** A request body and its Content-Type (none for FormData: fetch sets the boundary). */
export interface EncodedBody {
  body: ReplayableBody;
  contentType: string | null;
}

const JSON_TYPE = 'application/json';

function usage(message: string): TiffinClientError {
  return new TiffinClientError(message, 'usage');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** JSON text of nested arrays/typed arrays, writing bigints as exact integer literals. */
export function arrayJson(value: unknown): string {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const items = value as unknown as ArrayLike<number | bigint>;
    // Numbers and bigints print as JSON literals; join is the fast path for large tensors.
    return `[${Array.prototype.join.call(items, ',')}]`;
  }
  if (Array.isArray(value)) {
    // Plain numbers: the platform's writer; it throws on a bigint, which the loop below writes exactly.
    try {
      return JSON.stringify(value);
    } catch {
      // fall through
    }
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + arrayJson(value[i]);
    return `${out}]`;
  }
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value ?? null);
}

function hasToArray(value: unknown): value is { shape: readonly number[]; toArray(): unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toArray?: unknown }).toArray === 'function'
  );
}

/**
 * The API's shape for a flat typed array: a shape with known sizes and at most one -1 that the length
 * fills (so `Float64Array(8)` goes as `[[…4], […4]]` to a `[-1, 4]` API); null to send it flat.
 */
function targetShape(length: number, shape: unknown): number[] | null {
  if (!Array.isArray(shape) || shape.length < 2 || !shape.every(Number.isInteger)) return null;
  const known = (shape as number[]).filter((n) => n !== -1);
  if (shape.length - known.length > 1) return null;
  const product = known.reduce((a, b) => a * b, 1);
  if (product === 0 || length % product !== 0) return null;
  return (shape as number[]).map((n) => (n === -1 ? length / product : n));
}

/** A flat typed array as nested JSON rows of `shape`. */
function shapedJson(items: ArrayLike<number | bigint>, shape: number[], offset = 0, depth = 0): string {
  const n = shape[depth]!;
  if (depth === shape.length - 1) {
    return `[${Array.prototype.slice.call(items, offset, offset + n).join(',')}]`;
  }
  const stride = shape.slice(depth + 1).reduce((a, b) => a * b, 1);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(shapedJson(items, shape, offset + i * stride, depth + 1));
  return `[${parts.join(',')}]`;
}

function ndarrayBody(value: unknown, shape: unknown): string {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const items = value as unknown as ArrayLike<number | bigint>;
    const target = targetShape(items.length, shape);
    if (target) return shapedJson(items, target);
  }
  return arrayJson(hasToArray(value) ? value.toArray() : value);
}

/** Magic numbers of the image types the server decodes, for bytes sent without a type. */
function sniffImageType(bytes: Uint8Array): string | null {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x42, 0x4d)) return 'image/bmp';
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return 'image/tiff';
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45) return 'image/webp';
  if (bytes[4] === 0x66 && bytes[5] === 0x74 && bytes[6] === 0x79 && bytes[7] === 0x70) return 'image/avif';
  return null;
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  webp: 'image/webp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  avif: 'image/avif',
  csv: 'text/csv',
  json: JSON_TYPE,
  txt: 'text/plain',
  parquet: 'application/vnd.apache.parquet',
  pdf: 'application/pdf',
};

type BytesForm = Extract<WireForm, { form: 'bytes' }>;

/** Bytes of a file or image argument, with the type it should be sent as (Blob type, path extension, sniffed). */
async function binary(value: unknown, wire: BytesForm | null): Promise<{ blob: Blob; filename: string }> {
  const declared = wire?.mediaType ?? null;
  const isImage = wire?.sniff === 'image';
  let bytes: Uint8Array | null = null;
  let type = '';
  let filename = 'upload';
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    if (value.type) return { blob: value, filename: (value as { name?: string }).name || filename };
    bytes = new Uint8Array(await value.arrayBuffer());
  } else if (value instanceof Uint8Array) bytes = value;
  else if (value instanceof ArrayBuffer) bytes = new Uint8Array(value);
  else if (typeof value === 'string') {
    // A file path: Node only (browsers pass a Blob or File).
    // A variable specifier keeps browser bundlers from trying to resolve a Node module.
    const nodeFs = 'node:fs/promises';
    const fs = (await import(/* @vite-ignore */ nodeFs).catch(() => null)) as
      | typeof import('node:fs/promises')
      | null;
    if (!fs) throw usage('File paths can only be read in Node; pass a Blob, Uint8Array or ArrayBuffer');
    bytes = new Uint8Array(await fs.readFile(value));
    filename = value.split(/[\\/]/).pop() || filename;
    type = EXTENSION_TYPES[filename.split('.').pop()?.toLowerCase() ?? ''] ?? '';
  } else {
    throw usage(`Expected a Blob, Uint8Array, ArrayBuffer or file path, got ${typeof value}`);
  }
  if (!type && isImage) type = sniffImageType(bytes) ?? '';
  if (!type || (declared && !isImage && type !== declared))
    type = declared ?? (type || 'application/octet-stream');
  // Copy into a fresh ArrayBuffer-backed view so Blob accepts it whatever buffer backed the input.
  return { blob: new Blob([new Uint8Array(bytes)], { type }), filename };
}

/** Rows or a column map → the JSON layout of pandas `orient`. */
export function tableJson(value: unknown, orient: string): unknown {
  let rows: TableRow[];
  if (Array.isArray(value)) rows = value as TableRow[];
  else if (isPlainObject(value) && Object.values(value).every(Array.isArray)) {
    const columns = Object.entries(value as Record<string, unknown[]>);
    const n = Math.max(0, ...columns.map(([, c]) => c.length));
    rows = Array.from({ length: n }, (_, i) =>
      Object.fromEntries(columns.map(([k, c]) => [k, c[i] ?? null])),
    );
  } else throw usage('A DataFrame argument is an array of row objects or an object of column arrays');
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  switch (orient) {
    case 'records':
      return rows;
    case 'values':
      return rows.map((r) => columns.map((c) => r[c] ?? null));
    case 'split':
      return {
        columns,
        index: rows.map((_, i) => i),
        data: rows.map((r) => columns.map((c) => r[c] ?? null)),
      };
    case 'columns':
      return Object.fromEntries(
        columns.map((c) => [c, Object.fromEntries(rows.map((r, i) => [i, r[c] ?? null]))]),
      );
    case 'index':
      return Object.fromEntries(rows.map((r, i) => [i, r]));
    case 'table':
      return { schema: { fields: columns.map((name) => ({ name })) }, data: rows };
    default:
      throw usage(`Unknown DataFrame orient '${orient}'`);
  }
}

/** Values (a list, or label → value) → the JSON layout of a pandas Series `orient`. */
export function seriesJson(value: unknown, orient: string): unknown {
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : isPlainObject(value)
      ? Object.entries(value)
      : (() => {
          throw usage('A Series argument is a list of values or an object of label → value');
        })();
  if (orient === 'records' || orient === 'values') return entries.map(([, v]) => v);
  if (orient === 'split')
    return { name: null, index: entries.map(([k]) => k), data: entries.map(([, v]) => v) };
  if (orient === 'table') {
    return {
      schema: { fields: [{ name: 'index' }, { name: 'values' }], primaryKey: ['index'] },
      data: entries.map(([index, values]) => ({ index, values })),
    };
  }
  return Object.fromEntries(entries);
}

function json(value: unknown): EncodedBody {
  return { body: JSON.stringify(value), contentType: JSON_TYPE };
}

/** One argument as the request body of the API's input, in the form the server published for it. */
export async function encodeInput(value: unknown, wire: WireForm | null): Promise<EncodedBody> {
  switch (wire?.form) {
    case 'ndarray-json':
      return { body: ndarrayBody(value, wire.shape), contentType: JSON_TYPE };
    case 'json':
      return json(value);
    case 'text':
      if (typeof value !== 'string') throw usage(`A text argument is a string, got ${typeof value}`);
      return { body: value, contentType: `${wire.mediaType ?? 'text/plain'}; charset=utf-8` };
    case 'bytes': {
      const { blob } = await binary(value, wire);
      return { body: blob, contentType: blob.type };
    }
    case 'table-json':
      return json(tableJson(value, wire.orient));
    case 'series-json':
      return json(seriesJson(value, wire.orient));
    case 'multipart':
      return { body: await multipartBody(value, wire.parts), contentType: null };
    default:
      return untypedBody(value);
  }
}

/** An input without a published form: text for strings, bytes for binaries, JSON otherwise. */
async function untypedBody(value: unknown): Promise<EncodedBody> {
  if (typeof value === 'string') return { body: value, contentType: 'text/plain; charset=utf-8' };
  if (
    (typeof Blob !== 'undefined' && value instanceof Blob) ||
    value instanceof Uint8Array ||
    value instanceof ArrayBuffer
  ) {
    const { blob } = await binary(value, null);
    return { body: blob, contentType: blob.type };
  }
  if (hasToArray(value) || ArrayBuffer.isView(value))
    return { body: ndarrayBody(value, null), contentType: JSON_TYPE };
  return json(value);
}

async function multipartBody(value: unknown, fields: Readonly<Record<string, WireForm>>): Promise<FormData> {
  if (!isPlainObject(value)) throw usage('A Multipart argument is an object with one value per part');
  const form = new FormData();
  const names = Object.keys(fields).length > 0 ? Object.keys(fields) : Object.keys(value);
  for (const name of names) {
    if (!(name in value)) throw usage(`Multipart part '${name}' is missing`);
    const wire = fields[name] ?? null;
    const part = value[name];
    if (wire?.form === 'bytes') {
      const { blob, filename } = await binary(part, wire);
      form.append(name, blob, filename);
      continue;
    }
    const encoded = await encodeInput(part, wire);
    const body = encoded.body;
    if (typeof body === 'string' && encoded.contentType?.startsWith('text/plain')) form.append(name, body);
    else form.append(name, new Blob([body as BlobPart], { type: encoded.contentType ?? '' }), name);
  }
  return form;
}
