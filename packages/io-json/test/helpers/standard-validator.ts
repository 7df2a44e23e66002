import type { StandardIssue, StandardResult, StandardSchemaV1 } from '../../src/index.js';

export interface Point {
  x: number;
  y: number;
}

/**
 * A hand-made Standard Schema v1 validator (no library): `{x: number, y: number}`, strings that hold
 * numbers are coerced, and the issues use `{key}` path segments as the spec allows.
 */
export function pointSchema(options: { withJsonSchema?: boolean } = {}): StandardSchemaV1<unknown, Point> {
  const validate = (value: unknown): StandardResult<Point> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { issues: [{ message: 'Expected an object' }] };
    }
    const record = value as Record<string, unknown>;
    const issues: StandardIssue[] = [];
    const out: Partial<Point> = {};
    for (const key of ['x', 'y'] as const) {
      const raw = record[key];
      const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof n !== 'number' || Number.isNaN(n))
        issues.push({ message: `${key} must be a number`, path: [{ key }] });
      else out[key] = n;
    }
    return issues.length > 0 ? { issues } : { value: out as Point };
  };
  const jsonSchema = {
    input: ({ target }: { target: string }) => {
      if (target !== 'draft-07') throw new Error(`unsupported target ${target}`);
      return {
        $schema: 'http://json-schema.org/draft-07/schema#',
        title: 'Point',
        type: 'object',
        properties: { x: { type: 'number' }, y: { type: 'number' } },
        required: ['x', 'y'],
      };
    },
    output: ({ target }: { target: string }) => jsonSchema.input({ target }),
  };
  const standard = { version: 1 as const, vendor: 'hand-made', validate };
  // Extra members are allowed by the interface; the Standard JSON Schema one rides along when asked for.
  const props: StandardSchemaV1<unknown, Point>['~standard'] = options.withJsonSchema
    ? Object.assign(standard, { jsonSchema })
    : standard;
  return { '~standard': props };
}
