import SwaggerParser from '@apidevtools/swagger-parser';
import { JSON as JSONDescriptor, Service } from '@tiffin/core';
import { buildOpenApiDocument } from '@tiffin/core/internal';
import type { OpenAPI } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonModel } from '../src/index.js';
import { pointSchema } from './helpers/standard-validator.js';

const Address = z.object({ street: z.string(), city: z.string().default('Paris') }).meta({ id: 'Address' });
const Person = z
  .object({
    name: z.string().meta({ example: 'Ada' }),
    address: Address,
    born: z.iso.date().optional(),
    nickname: z.string().nullable(),
    tags: z.array(z.enum(['a', 'b'])),
  })
  .meta({ id: 'Person' });

describe('/docs.json with schema models is valid OpenAPI 3', () => {
  it('validates with zod models (named, nested, nullable) and a Standard Schema model', async () => {
    const svc = new Service('models');
    svc.api({ name: 'person', input: jsonModel(Person), output: jsonModel(Address) }, (p) => p.address);
    svc.api(
      {
        name: 'anon',
        input: jsonModel(z.object({ n: z.number().int().min(0) })),
        output: new JSONDescriptor(),
      },
      (x) => x,
    );
    svc.api(
      {
        name: 'point',
        input: new JSONDescriptor({ pydantic_model: pointSchema({ withJsonSchema: true }) }),
        output: new JSONDescriptor(),
      },
      (x) => x,
    );
    const doc = buildOpenApiDocument(svc);
    await expect(SwaggerParser.validate(structuredClone(doc) as OpenAPI.Document)).resolves.toBeTruthy();
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Person', 'Address']));
  });
});
