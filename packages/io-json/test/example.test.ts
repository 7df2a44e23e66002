import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { exampleFromJsonSchema, zodSchemaModelAdapter } from '../src/index.js';

describe('generated examples', () => {
  it('respect numeric bounds, exclusive ones included, so the example validates', async () => {
    const model = z.object({
      positive: z.number().positive(),
      count: z.number().int().gt(3).lt(10),
      negative: z.number().int().max(-2),
      ratio: z.number().min(0.25).max(0.75),
      below: z.number().lt(0),
    });
    const example = zodSchemaModelAdapter.example?.(model);
    expect(example).toEqual({ positive: 0.5, count: 4, negative: -2, ratio: 0.25, below: -0.5 });
    expect(model.safeParse(example).success).toBe(true);
  });

  it('read exclusive bounds spelt as booleans (OpenAPI 3.0) and as numbers (later drafts)', () => {
    expect(exampleFromJsonSchema({ type: 'integer', minimum: 5, exclusiveMinimum: true }, {})).toBe(6);
    expect(exampleFromJsonSchema({ type: 'integer', exclusiveMinimum: 5 }, {})).toBe(6);
    expect(exampleFromJsonSchema({ type: 'number', maximum: -1, exclusiveMaximum: true }, {})).toBe(-1.5);
    expect(exampleFromJsonSchema({ type: 'number', exclusiveMaximum: -1 }, {})).toBe(-1.5);
    expect(exampleFromJsonSchema({ type: 'number', minimum: 2, exclusiveMinimum: false }, {})).toBe(2);
  });

  it('respect string lengths and array sizes', () => {
    const model = z.object({
      code: z.string().length(3),
      long: z.string().min(10),
      pair: z.array(z.number()).min(2),
    });
    const example = zodSchemaModelAdapter.example?.(model);
    expect(example).toEqual({ code: 'str', long: 'xxxxxxxxxx', pair: [0, 0] });
    expect(model.safeParse(example).success).toBe(true);
  });

  it('take the first non-null member of a union and stop at unresolvable refs', () => {
    expect(exampleFromJsonSchema({ anyOf: [{ type: 'null' }, { type: 'boolean' }] }, {})).toBe(true);
    expect(exampleFromJsonSchema({ $ref: '#/components/schemas/Missing' }, {})).toBeNull();
    expect(
      exampleFromJsonSchema(
        { allOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: { const: 1 } } }] },
        {},
      ),
    ).toEqual({ a: 'string', b: 1 });
  });
});
