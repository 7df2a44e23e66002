/** JSON layouts of a table (pandas `orient`). */
export const ORIENTS = ['split', 'records', 'index', 'columns', 'values', 'table'] as const;
export type Orient = (typeof ORIENTS)[number];

export function isOrient(value: unknown): value is Orient {
  return typeof value === 'string' && (ORIENTS as readonly string[]).includes(value);
}
