import { BadInput, JSON as JSONDescriptor } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import '../src/index.js';
import { pointSchema } from './helpers/standard-validator.js';

const Address = z.object({ street: z.string(), city: z.string().default('Paris') }).meta({ id: 'Address' });
const Person = z
  .object({ name: z.string().meta({ example: 'Ada' }), address: Address, born: z.iso.date().optional() })
  .meta({ id: 'Person' });

describe('OpenAPI of a JSON descriptor with a zod model', () => {
  const descriptor = new JSONDescriptor({ pydantic_model: Person });

  it('shows the model JSON Schema in the request body with a generated example', () => {
    const body = descriptor.openapiRequestBody();
    const media = body.content['application/json'];
    expect(media.schema).toMatchObject({
      title: 'Person',
      type: 'object',
      required: ['name', 'address'],
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/components/schemas/Address' },
        born: { type: 'string', format: 'date' },
      },
    });
    expect(media.example).toEqual({
      name: 'Ada',
      address: { street: 'string', city: 'Paris' },
      born: '2024-01-01',
    });
    expect(body['x-tiffin-io-descriptor']).toEqual({
      id: 'tiffin.io.JSON',
      args: { has_pydantic_model: true, has_json_encoder: false },
    });
  });

  it('lists the model and its nested named models as components', () => {
    const schemas = descriptor.openapiComponents()?.schemas ?? {};
    expect(Object.keys(schemas).sort()).toEqual(['Address', 'Person']);
    expect(schemas.Address).toMatchObject({ type: 'object', required: ['street'] });
    expect(JSON.stringify(schemas)).not.toMatch(/definitions|\$defs/);
  });

  it('describes the response with the output side of the model (defaults are always present)', () => {
    const media = descriptor.openapiResponses().content['application/json'];
    expect(media.schema).toMatchObject({ title: 'Person', required: ['name', 'address'] });
    expect(descriptor.openapiResponses().description).toBe('Successful Response');
  });

  it('uses the Standard JSON Schema of a non-zod model', () => {
    const points = new JSONDescriptor({ pydantic_model: pointSchema({ withJsonSchema: true }) });
    expect(points.openapiSchema()).toMatchObject({ title: 'Point', required: ['x', 'y'] });
    expect(points.openapiComponents()?.schemas).toHaveProperty('Point');
    expect(points.openapiExample()).toEqual({ x: 0, y: 0 });
  });

  it('without a model: the empty schema (any JSON value), no components, no example', () => {
    const plain = new JSONDescriptor();
    expect(plain.openapiSchema()).toEqual({});
    expect(plain.openapiComponents()).toEqual({});
    expect(plain.openapiExample()).toBeNull();
  });
});

describe('JSON.fromSample', () => {
  it('uses a model value as the example instead of the generated one', () => {
    const sample = { name: 'Grace', address: { street: '1 Main St', city: 'Arlington' } };
    const descriptor = JSONDescriptor.fromSample(sample, { pydantic_model: Person });
    expect(descriptor.sample).toEqual(sample);
    expect(descriptor.openapiRequestBody().content['application/json'].example).toEqual(sample);
    expect(descriptor.openapiSchema()).toMatchObject({ title: 'Person' });
  });

  it('uses a parsed model value (what the API function gets) as the example too', async () => {
    const parsed = await z.parseAsync(Person, { name: 'Lin', address: { street: 'x' } });
    const descriptor = JSONDescriptor.fromSample(parsed, { pydantic_model: Person });
    expect(descriptor.openapiExample()).toEqual({ name: 'Lin', address: { street: 'x', city: 'Paris' } });
  });

  it('parses a JSON string or bytes sample and keeps plain objects and arrays', () => {
    expect(JSONDescriptor.fromSample('{"a":[1,2]}').sample).toEqual({ a: [1, 2] });
    expect(JSONDescriptor.fromSample(new TextEncoder().encode('[1]')).sample).toEqual([1]);
    expect(JSONDescriptor.fromSample([{ a: 1 }]).sample).toEqual([{ a: 1 }]);
  });

  it('rejects unparseable strings and bytes and non-JSON samples with the messages of the spec', () => {
    expect(() => JSONDescriptor.fromSample('{nope')).toThrow(BadInput);
    expect(() => JSONDescriptor.fromSample('{nope')).toThrow(
      /^Unable to parse JSON string\. Please make sure the input is a valid JSON string: /,
    );
    expect(() => JSONDescriptor.fromSample(new TextEncoder().encode('{nope'))).toThrow(
      /^Unable to parse JSON bytes\. Please make sure the input is a valid JSON bytes: /,
    );
    for (const bad of [5, true, null]) {
      expect(() => JSONDescriptor.fromSample(bad)).toThrow(
        `Unable to infer JSON type from sample: ${String(bad)}. Please make sure the input is a valid JSON object.`,
      );
    }
  });
});
