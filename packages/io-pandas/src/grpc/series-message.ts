import { BadInput, UnprocessableEntity } from '@tiffin/core';
import type { SeriesMessage } from '@tiffin/core/descriptor';
import { type Dtype, dtypeKind } from '../table/dtype.js';

/** Series message value fields and the dtype each one carries (docs/spec/io-descriptors.md §11.1). */
export const SERIES_FIELDS = {
  bool_values: 'bool',
  float_values: 'float32',
  int32_values: 'int32',
  int64_values: 'int64',
  double_values: 'float64',
  string_values: 'str',
} as const satisfies Record<keyof SeriesMessage, Dtype>;
export type SeriesField = keyof typeof SERIES_FIELDS;

/** The one non-empty value field of a message (none → null; several → 400). */
export function filledField(msg: SeriesMessage, errorClass: typeof BadInput = BadInput): SeriesField | null {
  const filled = (Object.keys(SERIES_FIELDS) as SeriesField[]).filter((f) => (msg[f]?.length ?? 0) > 0);
  if (filled.length > 1) {
    throw new errorClass(
      `Array contents can only be one of given values key. Use one of '${Object.keys(SERIES_FIELDS).join(', ')}' instead.`,
    );
  }
  return filled[0] ?? null;
}

/** Values of one field as JS values (int64 strings/Longs → numbers, exact beyond 2^53 as BigInt). */
export function fieldValues(msg: SeriesMessage, field: SeriesField): unknown[] {
  const raw = (msg[field] ?? []) as unknown[];
  if (field !== 'int64_values') return [...raw];
  return raw.map((v) => {
    const big = BigInt(String(v));
    return big <= BigInt(Number.MAX_SAFE_INTEGER) && big >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(big)
      : big;
  });
}

/** The message field for a column of `dtype`; mixed (object) columns cannot be sent. */
export function fieldForValues(dtype: Dtype, values: readonly unknown[], what: string): SeriesField {
  switch (dtypeKind(dtype)) {
    case 'int':
    case 'uint':
      return dtype === 'int32' || dtype === 'int16' || dtype === 'int8' ? 'int32_values' : 'int64_values';
    case 'float':
      return dtype === 'float32' || dtype === 'float16' ? 'float_values' : 'double_values';
    case 'bool':
      return 'bool_values';
    default:
      if (values.every((v) => typeof v === 'string')) return 'string_values';
      throw new UnprocessableEntity(`dtype in ${what} is not currently supported (mixed values).`);
  }
}

export function toMessage(field: SeriesField, values: readonly unknown[]): SeriesMessage {
  if (field === 'int64_values') {
    return { int64_values: values.map((v) => (typeof v === 'bigint' ? v.toString() : (v as number))) };
  }
  return { [field]: [...values] } as SeriesMessage;
}
