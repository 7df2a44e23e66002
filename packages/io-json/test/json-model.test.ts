import { BadInput, JSON as JSONDescriptor, Service } from '@tiffin/core';
import type { InputOf, OutputOf } from '@tiffin/core/internal';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { jsonModel } from '../src/index.js';
import { jsonRequest } from './helpers/request.js';
import type { Point, pointSchema } from './helpers/standard-validator.js';

const Query = z.object({ text: z.string(), topK: z.number().int().default(5) });

describe('jsonModel(schema): the typed JSON descriptor', () => {
  it('is core JSON with the model set', async () => {
    const descriptor = jsonModel(Query);
    expect(descriptor).toBeInstanceOf(JSONDescriptor);
    expect(descriptor.pydantic_model).toBe(Query);
    expect(await descriptor.fromHttpRequest(jsonRequest('{"text":"hi"}'))).toEqual({ text: 'hi', topK: 5 });
    await expect(descriptor.fromHttpRequest(jsonRequest('{}'))).rejects.toBeInstanceOf(BadInput);
  });

  it('passes the other JSON options on', () => {
    const encoder = (v: unknown) => v;
    expect(jsonModel(Query, { json_encoder: encoder }).json_encoder).toBe(encoder);
  });

  it('carries z.infer into the API function parameter (checked by tsc)', () => {
    const descriptor = jsonModel(Query);
    expectTypeOf<InputOf<typeof descriptor>>().toEqualTypeOf<z.infer<typeof Query>>();
    expectTypeOf<OutputOf<typeof descriptor>>().toEqualTypeOf<z.infer<typeof Query>>();
    expectTypeOf<
      InputOf<ReturnType<typeof jsonModel<ReturnType<typeof pointSchema>>>>
    >().toEqualTypeOf<Point>();

    const svc = new Service('typed_json');
    svc.api({ input: descriptor, output: new JSONDescriptor() }, async function search(query) {
      expectTypeOf(query.text).toBeString();
      expectTypeOf(query.topK).toBeNumber();
      // @ts-expect-error: the model has no such field
      return query.missing;
    });
    svc.api({ input: new JSONDescriptor(), output: jsonModel(Query) }, async function make() {
      return { text: 'x', topK: 1 };
    });
    expect([...svc.apis.keys()]).toEqual(['search', 'make']);
  });
});
