import { schemaModelAdapterFor } from '@tiffin/core/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { zodSchemaModelAdapter } from '../src/index.js';

describe('zod schema-model adapter', () => {
  it('is the adapter core picks for zod schemas once io-json is imported', () => {
    expect(schemaModelAdapterFor(z.object({ a: z.string() })).name).toBe('zod');
    expect(schemaModelAdapterFor(z.string()).name).toBe('zod');
  });

  it('returns the parsed value with defaults applied and optional fields left out', async () => {
    const model = z.object({
      name: z.string(),
      count: z.number().int().default(3),
      note: z.string().optional(),
    });
    const result = await zodSchemaModelAdapter.validate(model, { name: 'a' });
    expect(result).toEqual({ ok: true, value: { name: 'a', count: 3 } });
    expect(result.ok && 'note' in (result.value as object)).toBe(false);
  });

  it('applies coercion and transforms as zod does', async () => {
    const model = z.object({ n: z.coerce.number(), tag: z.string().transform((s) => s.toUpperCase()) });
    expect(await zodSchemaModelAdapter.validate(model, { n: '5', tag: 'x' })).toEqual({
      ok: true,
      value: { n: 5, tag: 'X' },
    });
  });

  it('strips unknown keys by default and rejects them under .strict()', async () => {
    const loose = z.object({ a: z.number() });
    expect(await zodSchemaModelAdapter.validate(loose, { a: 1, extra: true })).toEqual({
      ok: true,
      value: { a: 1 },
    });
    const strict = loose.strict();
    expect(await zodSchemaModelAdapter.validate(strict, { a: 1, extra: true })).toEqual({
      ok: false,
      issues: [{ path: [], message: 'Unrecognized key: "extra"', code: 'unrecognized_keys' }],
    });
  });

  it('reports every issue with its path into the value', async () => {
    const model = z.object({ items: z.array(z.object({ name: z.string(), qty: z.number().min(1) })) });
    const result = await zodSchemaModelAdapter.validate(model, {
      items: [{ name: 'a', qty: 0 }, { qty: 2 }],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => ({ path: i.path, code: i.code }))).toEqual([
      { path: ['items', 0, 'qty'], code: 'too_small' },
      { path: ['items', 1, 'name'], code: 'invalid_type' },
    ]);
    for (const issue of result.issues) expect(issue.message.length).toBeGreaterThan(0);
  });

  it('runs async refinements', async () => {
    const model = z.string().refine(async (s) => s.startsWith('ok'), 'must start with ok');
    expect(await zodSchemaModelAdapter.validate(model, 'ok!')).toEqual({ ok: true, value: 'ok!' });
    expect(await zodSchemaModelAdapter.validate(model, 'no')).toEqual({
      ok: false,
      issues: [{ path: [], message: 'must start with ok', code: 'custom' }],
    });
  });

  it('accepts zod/mini schemas', async () => {
    const zm = await import('zod/mini');
    const model = zm.object({ a: zm.number() });
    expect(zodSchemaModelAdapter.accepts(model)).toBe(true);
    expect(await zodSchemaModelAdapter.validate(model, { a: 1 })).toEqual({ ok: true, value: { a: 1 } });
  });

  it('does not accept non-zod values', () => {
    expect(zodSchemaModelAdapter.accepts({})).toBe(false);
    expect(zodSchemaModelAdapter.accepts(null)).toBe(false);
    expect(zodSchemaModelAdapter.accepts({ _zod: {}, '~standard': { vendor: 'other' } })).toBe(false);
  });
});

describe('zod models in OpenAPI', () => {
  const Address = z.object({ street: z.string(), zip: z.string().optional() }).meta({ id: 'Address' });
  const User = z
    .object({
      name: z.string().meta({ example: 'Ada' }),
      age: z.number().int().default(30),
      home: Address,
      work: Address.nullable(),
      tags: z.array(z.string()),
    })
    .strict()
    .meta({ id: 'User', description: 'A user' });

  it('names a model by its .meta({id}) and lists nested named models as components', () => {
    expect(zodSchemaModelAdapter.modelName(User)).toBe('User');
    const { schema, components } = zodSchemaModelAdapter.jsonSchema(User);
    expect(Object.keys(components).sort()).toEqual(['Address', 'User']);
    expect(components.User).toEqual(schema);
    expect(schema).toMatchObject({
      title: 'User',
      description: 'A user',
      type: 'object',
      additionalProperties: false,
      required: ['name', 'home', 'work', 'tags'],
    });
    const properties = schema.properties as Record<string, Record<string, unknown>>;
    expect(properties.home).toEqual({ $ref: '#/components/schemas/Address' });
    expect(properties.work).toEqual({ nullable: true, allOf: [{ $ref: '#/components/schemas/Address' }] });
    expect(properties.age).toMatchObject({ type: 'integer', default: 30 });
    expect(components.Address).toMatchObject({ type: 'object', required: ['street'] });
  });

  it('leaves no local definitions, $schema or $id behind', () => {
    const text = JSON.stringify(zodSchemaModelAdapter.jsonSchema(User));
    expect(text).not.toMatch(/definitions|\$defs|\$schema|\$id/);
  });

  it('describes the input side by default and the output side on request (defaults become required)', () => {
    const model = z.object({ a: z.string(), b: z.number().default(1) });
    expect(zodSchemaModelAdapter.jsonSchema(model).schema.required).toEqual(['a']);
    expect(zodSchemaModelAdapter.jsonSchema(model, 'output').schema.required).toEqual(['a', 'b']);
  });

  it('gives an anonymous model a stable schema-derived name and keeps nested named models', () => {
    const anon = z.object({ a: z.string(), address: Address });
    const name = zodSchemaModelAdapter.modelName(anon);
    expect(name).toMatch(/^Model_[0-9a-f]{8}$/);
    expect(zodSchemaModelAdapter.modelName(z.object({ a: z.string(), address: Address }))).toBe(name);
    expect(zodSchemaModelAdapter.modelName(z.object({ b: z.string() }))).not.toBe(name);
    const { schema, components } = zodSchemaModelAdapter.jsonSchema(anon);
    expect(schema.title).toBeUndefined();
    expect(Object.keys(components)).toEqual(['Address']);
  });

  it('uses a .meta({title}) as the name of a model without id', () => {
    expect(zodSchemaModelAdapter.modelName(z.object({ a: z.string() }).meta({ title: 'Order Line' }))).toBe(
      'Order_Line',
    );
  });

  it('writes dates as date-time strings and bigints as int64 instead of failing', () => {
    const { schema } = zodSchemaModelAdapter.jsonSchema(z.object({ at: z.date(), big: z.bigint() }));
    expect(schema.properties).toEqual({
      at: { type: 'string', format: 'date-time' },
      big: { type: 'integer', format: 'int64' },
    });
  });

  it('handles recursive models through component refs', () => {
    const Category = z
      .object({
        name: z.string(),
        get children() {
          return z.array(Category);
        },
      })
      .meta({ id: 'Category' });
    const { schema, components } = zodSchemaModelAdapter.jsonSchema(Category);
    expect((schema.properties as Record<string, unknown>).children).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Category' },
    });
    expect(Object.keys(components)).toEqual(['Category']);
    expect(zodSchemaModelAdapter.example?.(Category)).toMatchObject({
      name: 'string',
      children: [{ name: 'string' }],
    });
  });

  it('generates an example from the schema, using examples and defaults where given', () => {
    expect(zodSchemaModelAdapter.example?.(User)).toEqual({
      name: 'Ada',
      age: 30,
      home: { street: 'string', zip: 'string' },
      work: { street: 'string', zip: 'string' },
      tags: ['string'],
    });
    expect(zodSchemaModelAdapter.example?.(z.enum(['red', 'green']))).toBe('red');
    expect(zodSchemaModelAdapter.example?.(z.object({ e: z.email(), n: z.number().min(5) }))).toEqual({
      e: 'user@example.com',
      n: 5,
    });
  });
});
