import { type DType, UnprocessableEntity } from '@tiffin/core';
import {
  dtypeKind as arrayDtypeKind,
  integerRange as arrayIntegerRange,
  canCastSameKind as canCastArraySameKind,
  DTYPES,
  type DTypeKind,
  isIntegerDType,
} from '@tiffin/core/descriptor';

/** pandas datetimes (nanosecond resolution); the one column dtype numpy arrays here lack. */
export const DATETIME = 'datetime64[ns]';

/** Column dtypes, by their pandas/numpy names: core's array dtypes plus datetimes. */
export type Dtype = DType | typeof DATETIME;

export type DtypeKind = 'int' | 'uint' | 'float' | 'bool' | 'str' | 'object' | 'datetime';

/** danfojs's dtype labels (its storage is plain JS values whatever the label). */
export type DanfoDtype = 'int32' | 'float32' | 'string' | 'boolean' | 'datetime';

const ALIASES: Record<string, Dtype> = {
  int: 'int64',
  long: 'int64',
  i1: 'int8',
  i2: 'int16',
  i4: 'int32',
  i8: 'int64',
  u1: 'uint8',
  u2: 'uint16',
  u4: 'uint32',
  u8: 'uint64',
  float: 'float64',
  double: 'float64',
  f2: 'float16',
  half: 'float16',
  f4: 'float32',
  f8: 'float64',
  bool: 'bool',
  boolean: 'bool',
  '?': 'bool',
  str: 'str',
  string: 'str',
  U: 'str',
  '<U': 'str',
  object: 'object',
  O: 'object',
  datetime: 'datetime64[ns]',
  datetime64: 'datetime64[ns]',
  'datetime64[ns]': 'datetime64[ns]',
  'datetime64[ms]': 'datetime64[ns]',
  'datetime64[us]': 'datetime64[ns]',
};
for (const n of DTYPES) ALIASES[n] = n;

/** Canonical dtype for a name; unknown → UnprocessableEntity (a construction-time error). */
export function normalizeDtype(name: string): Dtype {
  const d = ALIASES[name] ?? ALIASES[name.toLowerCase()];
  if (!d) {
    throw new UnprocessableEntity(
      `Invalid dtype "${name}": expected one of int8..int64, uint8..uint64, float16/32/64, bool, str, object, datetime64[ns]`,
    );
  }
  return d;
}

const KIND_NAMES: Record<DTypeKind, DtypeKind> = {
  b: 'bool',
  i: 'int',
  u: 'uint',
  f: 'float',
  U: 'str',
  O: 'object',
};

export function dtypeKind(d: Dtype): DtypeKind {
  return d === DATETIME ? 'datetime' : KIND_NAMES[arrayDtypeKind(d)];
}

export function toDanfoDtype(d: Dtype): DanfoDtype {
  switch (dtypeKind(d)) {
    case 'int':
    case 'uint':
      return 'int32';
    case 'float':
      return 'float32';
    case 'bool':
      return 'boolean';
    case 'datetime':
      return 'datetime';
    default:
      return 'string';
  }
}

/** A danfo label back to the pandas dtype it stands for (danfo has no int64/object distinction). */
export function fromDanfoDtype(label: string): Dtype {
  switch (label) {
    case 'int32':
      return 'int64';
    case 'float32':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'datetime':
      return 'datetime64[ns]';
    default:
      return 'object';
  }
}

/** core's exact (bigint) integer ranges, with int64/uint64 limited to exact JS integers. */
const INT_RANGES: Partial<Record<Dtype, readonly [number, number]>> = Object.fromEntries(
  DTYPES.filter(isIntegerDType).map((d) => {
    const { min, max } = arrayIntegerRange(d);
    return [
      d,
      [Math.max(Number(min), Number.MIN_SAFE_INTEGER), Math.min(Number(max), Number.MAX_SAFE_INTEGER)],
    ];
  }),
);

/** Inclusive value range of an integer dtype (int64/uint64 limited to exact JS integers). */
export function integerRange(d: Dtype): readonly [number, number] | undefined {
  return INT_RANGES[d];
}

/** The OpenAPI scalar type a dtype's values have (docs/spec/io-descriptors.md §3.7). */
export function openapiType(d: Dtype): string {
  switch (dtypeKind(d)) {
    case 'int':
    case 'uint':
      return 'integer';
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'str':
    case 'datetime':
      return 'string';
    default:
      return 'object';
  }
}

/** numpy's same-kind casting rule (docs/spec/io-descriptors.md §2.4 table), with datetimes castable only to str/object. */
export function canCastSameKind(from: Dtype, to: Dtype): boolean {
  if (from === DATETIME) return to === DATETIME || to === 'str' || to === 'object';
  if (to === DATETIME) return false;
  return canCastArraySameKind(from, to);
}
