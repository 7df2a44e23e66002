import { InvalidArgument } from '@tiffin/core';

/** JSON layouts of a table (pandas `orient`). */
export const ORIENTS = ['split', 'records', 'index', 'columns', 'values', 'table'] as const;
export type Orient = (typeof ORIENTS)[number];

export function isOrient(value: unknown): value is Orient {
  return typeof value === 'string' && (ORIENTS as readonly string[]).includes(value);
}

/** The `orient` option (default `records`), checked; `owner` names the descriptor in the error. */
export function resolveOrient(value: unknown, owner: string): Orient {
  const orient = value ?? 'records';
  if (!isOrient(orient)) {
    throw new InvalidArgument(
      `${owner}: orient must be one of ${ORIENTS.join(', ')}, got ${JSON.stringify(orient)}`,
    );
  }
  return orient;
}
