import { UnprocessableEntity } from '@tiffin/core';

/** Column dtypes, by their pandas/numpy names. */
export type Dtype =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'float16'
  | 'float32'
  | 'float64'
  | 'bool'
  | 'str'
  | 'object'
  | 'datetime64[ns]';

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
for (const n of ['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64']) {
  ALIASES[n] = n as Dtype;
}
for (const n of ['float16', 'float32', 'float64']) ALIASES[n] = n as Dtype;

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

export function dtypeKind(d: Dtype): DtypeKind {
  if (d.startsWith('int')) return 'int';
  if (d.startsWith('uint')) return 'uint';
  if (d.startsWith('float')) return 'float';
  if (d === 'bool') return 'bool';
  if (d === 'str') return 'str';
  if (d === 'datetime64[ns]') return 'datetime';
  return 'object';
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

const INT_RANGES: Partial<Record<Dtype, readonly [number, number]>> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint8: [0, 255],
  uint16: [0, 65535],
  uint32: [0, 4294967295],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

/** Inclusive value range of an integer dtype (int64/uint64 limited to exact JS integers). */
export function integerRange(d: Dtype): readonly [number, number] | undefined {
  return INT_RANGES[d];
}

/** The OpenAPI scalar type a dtype's values have (spec 3.7). */
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

const SAME_KIND: Record<DtypeKind, readonly DtypeKind[]> = {
  bool: ['bool', 'int', 'uint', 'float', 'str', 'object'],
  int: ['int', 'float', 'str', 'object'],
  uint: ['int', 'uint', 'float', 'str', 'object'],
  float: ['float', 'str', 'object'],
  str: ['str', 'object'],
  datetime: ['datetime', 'str', 'object'],
  object: ['object'],
};

/** numpy's same-kind casting rule (spec 2.4 table). */
export function canCastSameKind(from: Dtype, to: Dtype): boolean {
  return SAME_KIND[dtypeKind(from)].includes(dtypeKind(to));
}
