import type { PackageDefinition } from '@grpc/proto-loader';
import { VALUE_FIELDS } from '../wire/proto/messages.js';
import { enumValues, fieldNumber } from './proto-reflection.js';

/** The packed floating-point fields written as raw little-endian bytes, by element size. */
const RAW_FIELDS = { double_values: 8, float_values: 4 } as const;
type RawField = keyof typeof RAW_FIELDS;

interface NDArrayLike {
  dtype?: string | number;
  shape?: unknown[];
  [field: string]: unknown;
}

/**
 * A serializer for `Response` messages that writes a float32/float64 NDArray's values as one copy of their bytes
 * (protobufjs writes packed doubles one element at a time, through an operation object each: about 30 ns a
 * value, most of a 1k-float gRPC answer's encoding). Any other response goes to `fallback` (protobufjs). The
 * bytes are the ones protobufjs writes for the same message (field order, packing, zero-length fields left
 * out), which the tests check.
 */
export function ndarrayResponseSerializer(
  protocol: PackageDefinition,
  fallback: (response: unknown) => Buffer,
): (response: unknown) => Buffer {
  const numberOf = (message: string, name: string) => fieldNumber(protocol, message, name);
  const ndarrayTag = (numberOf('bentoml.grpc.v1.Response', 'ndarray') << 3) | 2;
  const dtypeTag = numberOf('bentoml.grpc.v1.NDArray', 'dtype') << 3;
  const shapeTag = (numberOf('bentoml.grpc.v1.NDArray', 'shape') << 3) | 2;
  const rawTags = {
    double_values: (numberOf('bentoml.grpc.v1.NDArray', 'double_values') << 3) | 2,
    float_values: (numberOf('bentoml.grpc.v1.NDArray', 'float_values') << 3) | 2,
  };
  const dtypes = enumValues(protocol, 'bentoml.grpc.v1.NDArray', 'DType');

  return (response) => {
    const message = response as { content?: string; ndarray?: NDArrayLike } | null;
    const nd = message?.content === 'ndarray' ? message.ndarray : undefined;
    if (!nd) return fallback(response);
    let field: RawField | undefined;
    for (const name of VALUE_FIELDS) {
      const values = nd[name];
      if (values === undefined || values === null) continue;
      if (field !== undefined || !(name in RAW_FIELDS) || !Array.isArray(values)) return fallback(response);
      field = name as RawField;
    }
    const dtype = typeof nd.dtype === 'string' ? dtypes.get(nd.dtype) : nd.dtype;
    if (nd.dtype !== undefined && (dtype === undefined || !Number.isInteger(dtype)))
      return fallback(response);
    const shape = nd.shape ?? [];
    if (!Array.isArray(shape)) return fallback(response);

    // The values' bytes first (their length decides the headers).
    const values = field ? (nd[field] as unknown[]) : [];
    const raw =
      field === 'double_values'
        ? new Uint8Array(new Float64Array(values as number[]).buffer)
        : field === 'float_values'
          ? new Uint8Array(new Float32Array(values as number[]).buffer)
          : new Uint8Array(0);
    const shapeInts = shape.map((d) => (d as number) | 0);
    let shapeBytes = 0;
    for (const d of shapeInts) shapeBytes += int32Size(d);
    let body = 0;
    if (dtype !== undefined) body += 1 + int32Size(dtype);
    if (shapeInts.length > 0) body += 1 + varintSize(shapeBytes) + shapeBytes;
    if (raw.length > 0) body += 1 + varintSize(raw.length) + raw.length;

    const out = Buffer.allocUnsafe(1 + varintSize(body) + body);
    let at = 0;
    const put = (v: number) => {
      at = writeVarint(out, at, v);
    };
    out[at++] = ndarrayTag;
    put(body);
    if (dtype !== undefined) {
      out[at++] = dtypeTag;
      at = writeInt32(out, at, dtype);
    }
    if (shapeInts.length > 0) {
      out[at++] = shapeTag;
      put(shapeBytes);
      for (const d of shapeInts) at = writeInt32(out, at, d);
    }
    if (raw.length > 0) {
      out[at++] = rawTags[field!];
      put(raw.length);
      out.set(raw, at);
      at += raw.length;
    }
    return out;
  };
}

/** Bytes of an unsigned varint. */
function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Bytes of an int32 as protobuf writes it: negatives sign-extended to 64 bits, so 10 bytes. */
function int32Size(v: number): number {
  return v < 0 ? 10 : varintSize(v);
}

function writeVarint(out: Buffer, at: number, v: number): number {
  while (v >= 0x80) {
    out[at++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[at++] = v;
  return at;
}

function writeInt32(out: Buffer, at: number, v: number): number {
  if (v >= 0) return writeVarint(out, at, v);
  // Two's complement over 64 bits: the low 32 bits as given, the high 32 all ones.
  let lo = v >>> 0;
  let hi = 0xffffffff;
  for (let i = 0; i < 9; i++) {
    out[at++] = (lo & 0x7f) | 0x80;
    lo = (lo >>> 7) | ((hi & 0x7f) << 25);
    hi >>>= 7;
  }
  out[at++] = lo & 0x01;
  return at;
}
