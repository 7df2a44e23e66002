import { isUtf8 } from 'node:buffer';
import type { PackageDefinition } from '@grpc/proto-loader';
import { enumValues, fieldNumber } from './proto-reflection.js';

/** Thrown inside the fast reader when the bytes are anything but the plain case: protobufjs takes over. */
const NOT_PLAIN = Symbol('not a plain float/double NDArray request');

/**
 * A deserializer for `Request` messages carrying a float32/float64 NDArray: reads the packed values as one
 * block of little-endian bytes (protobufjs reads them one element at a time, then copies them again into
 * the plain object). It gives the object proto-loader gives (same fields, enum names, absent fields absent)
 * for the one layout clients send (each field once, packed values); anything else — other contents, unknown
 * or repeated fields, unpacked values, unknown enum values, malformed bytes — goes to `fallback` (protobufjs),
 * which decodes or rejects it as before. The tests check both against protobufjs.
 */
export function ndarrayRequestDeserializer(
  protocol: PackageDefinition,
  fallback: (bytes: Buffer) => unknown,
): (bytes: Buffer) => unknown {
  const numberOf = (message: string, name: string) => fieldNumber(protocol, message, name);
  const API_NAME = numberOf('bentoml.grpc.v1.Request', 'api_name');
  const NDARRAY = numberOf('bentoml.grpc.v1.Request', 'ndarray');
  const DTYPE = numberOf('bentoml.grpc.v1.NDArray', 'dtype');
  const SHAPE = numberOf('bentoml.grpc.v1.NDArray', 'shape');
  const DOUBLES = numberOf('bentoml.grpc.v1.NDArray', 'double_values');
  const FLOATS = numberOf('bentoml.grpc.v1.NDArray', 'float_values');
  const dtypeNames = new Map(
    [...enumValues(protocol, 'bentoml.grpc.v1.NDArray', 'DType')].map(([name, number]) => [number, name]),
  );

  const readNdarray = (r: Reader, end: number): Record<string, unknown> => {
    const nd: Record<string, unknown> = {};
    let seen = 0;
    while (r.at < end) {
      const tag = r.varint32();
      const field = tag >>> 3;
      const wire = tag & 7;
      // Each field once: a repeat means protobuf's merge rules, which protobufjs applies.
      const bit = 1 << field;
      if (field > 30 || seen & bit) throw NOT_PLAIN;
      seen |= bit;
      if (field === DTYPE && wire === 0) {
        const name = dtypeNames.get(r.int32());
        if (name === undefined) throw NOT_PLAIN;
        nd.dtype = name;
      } else if (field === SHAPE && wire === 2) {
        const stop = r.lengthEnd(end);
        const shape: number[] = [];
        while (r.at < stop) shape.push(r.int32());
        if (r.at !== stop) throw NOT_PLAIN;
        if (shape.length > 0) nd.shape = shape;
      } else if ((field === DOUBLES || field === FLOATS) && wire === 2) {
        const stop = r.lengthEnd(end);
        const size = field === DOUBLES ? 8 : 4;
        const length = stop - r.at;
        if (length % size !== 0) throw NOT_PLAIN;
        if (length > 0) {
          // A copy into an aligned buffer, read as a typed array, then a plain array as proto-loader gives.
          const aligned = new Uint8Array(length);
          aligned.set(r.bytes.subarray(r.at, stop));
          const view = size === 8 ? new Float64Array(aligned.buffer) : new Float32Array(aligned.buffer);
          const values = new Array<number>(view.length);
          for (let i = 0; i < view.length; i++) values[i] = view[i]!;
          nd[field === DOUBLES ? 'double_values' : 'float_values'] = values;
        }
        r.at = stop;
      } else throw NOT_PLAIN;
    }
    if (r.at !== end) throw NOT_PLAIN;
    return nd;
  };

  return (bytes) => {
    try {
      const r = new Reader(bytes);
      const request: Record<string, unknown> = {};
      let apiName: string | undefined;
      let ndarray: Record<string, unknown> | undefined;
      while (r.at < bytes.length) {
        const tag = r.varint32();
        const field = tag >>> 3;
        const wire = tag & 7;
        if (field === API_NAME && wire === 2 && apiName === undefined) {
          const stop = r.lengthEnd(bytes.length);
          const raw = bytes.subarray(r.at, stop);
          // protobufjs and Node replace invalid UTF-8 differently: leave such names to protobufjs.
          if (!isUtf8(raw)) throw NOT_PLAIN;
          apiName = raw.toString('utf8');
          r.at = stop;
        } else if (field === NDARRAY && wire === 2 && ndarray === undefined) {
          const stop = r.lengthEnd(bytes.length);
          ndarray = readNdarray(r, stop);
        } else throw NOT_PLAIN;
      }
      if (!ndarray) throw NOT_PLAIN;
      if (apiName !== undefined) request.api_name = apiName;
      request.ndarray = ndarray;
      request.content = 'ndarray';
      return request;
    } catch (err) {
      if (err !== NOT_PLAIN) throw err;
      return fallback(bytes);
    }
  };
}

/** A cursor over protobuf wire bytes; every read that would pass the end is NOT_PLAIN. */
class Reader {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  /** A varint that fits 32 bits unsigned (tags and lengths); longer ones are NOT_PLAIN. */
  varint32(): number {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.at >= this.bytes.length) throw NOT_PLAIN;
      const b = this.bytes[this.at++]!;
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (value > 0xffffffff) throw NOT_PLAIN;
        return value;
      }
    }
    throw NOT_PLAIN;
  }

  /**
   * An int32 as protobuf writes it: 1 to 5 bytes, or exactly 10 for a negative one; the low 32 bits, signed.
   * Other lengths are NOT_PLAIN (protobufjs reads them its own way: it skips 5 bytes after the fifth).
   */
  int32(): number {
    let low = 0;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.bytes.length) throw NOT_PLAIN;
      const b = this.bytes[this.at++]!;
      if (i < 5) low |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        if (i >= 5 && i < 9) throw NOT_PLAIN;
        return low | 0;
      }
    }
    throw NOT_PLAIN;
  }

  /** Reads a length and returns where the field it prefixes ends (within `limit`). */
  lengthEnd(limit: number): number {
    const length = this.varint32();
    const end = this.at + length;
    if (end > limit) throw NOT_PLAIN;
    return end;
  }
}
