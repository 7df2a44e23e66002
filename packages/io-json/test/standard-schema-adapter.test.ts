import { schemaModelAdapterFor } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { isStandardSchema, standardSchemaModelAdapter } from '../src/index.js';
import { pointSchema } from './helpers/standard-validator.js';

describe('Standard Schema adapter (a hand-made validator, no library)', () => {
  it('is the adapter core picks for a non-zod Standard Schema object', () => {
    expect(schemaModelAdapterFor(pointSchema()).name).toBe('standard-schema');
  });

  it('recognises Standard Schema v1 objects only', () => {
    expect(isStandardSchema(pointSchema())).toBe(true);
    expect(isStandardSchema({ '~standard': { version: 2, validate: () => ({ value: 1 }) } })).toBe(false);
    expect(isStandardSchema({ '~standard': { version: 1 } })).toBe(false);
    expect(isStandardSchema('x')).toBe(false);
  });

  it("returns the validator's output value", async () => {
    expect(await standardSchemaModelAdapter.validate(pointSchema(), { x: '1.5', y: 2 })).toEqual({
      ok: true,
      value: { x: 1.5, y: 2 },
    });
  });

  it('turns issues with {key} path segments into plain paths', async () => {
    expect(await standardSchemaModelAdapter.validate(pointSchema(), { x: 'a' })).toEqual({
      ok: false,
      issues: [
        { path: ['x'], message: 'x must be a number' },
        { path: ['y'], message: 'y must be a number' },
      ],
    });
    expect(await standardSchemaModelAdapter.validate(pointSchema(), [1])).toEqual({
      ok: false,
      issues: [{ path: [], message: 'Expected an object' }],
    });
  });

  it('awaits validators that return a promise and keeps numeric and symbol path keys', async () => {
    const tag = Symbol('tag');
    const model = {
      '~standard': {
        version: 1 as const,
        vendor: 'async-hand-made',
        validate: async () => ({ issues: [{ message: 'bad', path: [0, { key: 'a' }, tag] }] }),
      },
    };
    expect(await standardSchemaModelAdapter.validate(model, null)).toEqual({
      ok: false,
      issues: [{ path: [0, 'a', 'tag'], message: 'bad' }],
    });
  });

  it('uses the Standard JSON Schema interface when the library provides one, trying other targets', () => {
    const model = pointSchema({ withJsonSchema: true });
    expect(standardSchemaModelAdapter.modelName(model)).toBe('Point');
    const { schema, components } = standardSchemaModelAdapter.jsonSchema(model);
    expect(schema).toEqual({
      title: 'Point',
      type: 'object',
      properties: { x: { type: 'number' }, y: { type: 'number' } },
      required: ['x', 'y'],
    });
    expect(components).toEqual({});
    expect(standardSchemaModelAdapter.example?.(model)).toEqual({ x: 0, y: 0 });
  });

  it('describes a validator without a JSON Schema as an unconstrained value', () => {
    const { schema, components } = standardSchemaModelAdapter.jsonSchema(pointSchema());
    expect(schema).toEqual({});
    expect(components).toEqual({});
    expect(standardSchemaModelAdapter.modelName(pointSchema())).toMatch(/^Model_[0-9a-f]{8}$/);
  });

  it('also handles zod through the standard interface when zod is not preferred', async () => {
    const { z } = await import('zod');
    const model = z.object({ a: z.number().default(2) });
    expect(await standardSchemaModelAdapter.validate(model, {})).toEqual({ ok: true, value: { a: 2 } });
    expect(standardSchemaModelAdapter.jsonSchema(model).schema).toMatchObject({ type: 'object' });
  });
});
