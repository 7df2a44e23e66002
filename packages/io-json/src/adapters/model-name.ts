import { createHash } from 'node:crypto';

/** Component names must be URL-safe-ish identifiers: keep letters, digits, `_`, `.` and `-`. */
export function sanitizeComponentName(name: string): string {
  const cleaned = name.trim().replace(/[^A-Za-z0-9_.-]+/g, '_');
  return cleaned.length > 0 ? cleaned : 'Model';
}

/**
 * A stable name for a model its library left unnamed, derived from its JSON Schema so two different
 * anonymous models in one service do not overwrite each other's `components.schemas` entry.
 */
export function anonymousModelName(jsonSchema: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(jsonSchema)).digest('hex').slice(0, 8);
  return `Model_${digest}`;
}
