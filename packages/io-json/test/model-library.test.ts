import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { standardSchemaModelAdapter, zodSchemaModelAdapter } from '../src/index.js';
import { pointSchema } from './helpers/standard-validator.js';

// Plumbing both adapters share (src/adapters/model-library.ts), checked through each of them.
const cases = [
  {
    adapter: zodSchemaModelAdapter,
    model: () => z.object({ a: z.number().default(1) }),
    foreign: pointSchema(),
    message: 'The zod schema-model adapter was given a non-zod model',
  },
  {
    adapter: standardSchemaModelAdapter,
    model: pointSchema,
    foreign: { not: 'a schema' },
    message: 'The standard-schema adapter was given a non-Standard-Schema model',
  },
] as const;

describe.each(cases)('$adapter.name adapter plumbing', ({ adapter, model, foreign, message }) => {
  it('refuses models of another library: validate rejects, the schema methods throw', async () => {
    await expect(adapter.validate(foreign, {})).rejects.toThrow(new TypeError(message));
    expect(() => adapter.modelName(foreign)).toThrow(new TypeError(message));
    expect(() => adapter.jsonSchema(foreign)).toThrow(new TypeError(message));
    expect(() => adapter.example!(foreign)).toThrow(new TypeError(message));
  });

  it('generates the OpenAPI schema once per model and direction', () => {
    const m = model();
    const input = adapter.jsonSchema(m, 'input').schema;
    expect(adapter.jsonSchema(m).schema).toBe(input);
    expect(adapter.jsonSchema(m, 'output').schema).toBe(adapter.jsonSchema(m, 'output').schema);
    expect(adapter.jsonSchema(model(), 'input').schema).not.toBe(input);
  });
});
