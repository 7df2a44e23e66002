import { BadInput, JSON as JSONDescriptor } from '@tiffin/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import '../src/index.js';
import { jsonRequest } from './helpers/request.js';
import { pointSchema } from './helpers/standard-validator.js';

const Item = z.object({ name: z.string(), qty: z.number().int().min(1).default(1) });
const Order = z.object({ id: z.string(), items: z.array(Item), note: z.string().optional() }).strict();

/** The BadInput `read` fails with: a call, since a descriptor step that answers at once also throws at once. */
async function rejection(read: () => unknown): Promise<BadInput> {
  const err = await Promise.resolve()
    .then(read)
    .then(
      () => {
        throw new Error('expected a rejection');
      },
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(BadInput);
  return err as BadInput;
}

describe('JSON({ pydantic_model: zod }) input', () => {
  const descriptor = new JSONDescriptor({ pydantic_model: Order });

  it('gives the API function the parsed value, defaults filled in', async () => {
    const value = await descriptor.fromHttpRequest(jsonRequest('{"id":"o1","items":[{"name":"tea"}]}'));
    expect(value).toEqual({ id: 'o1', items: [{ name: 'tea', qty: 1 }] });
  });

  it('answers invalid JSON text with 400 BadInput', async () => {
    const err = await rejection(() => descriptor.fromHttpRequest(jsonRequest('{"id": ')));
    expect(err.httpStatus).toBe(400);
    expect(err.message).toMatch(/^Invalid JSON input received: /);
    expect(err.toBody().type).toBe('BadInput');
  });

  it('answers an empty body with 400 BadInput', async () => {
    expect((await rejection(() => descriptor.fromHttpRequest(jsonRequest('')))).httpStatus).toBe(400);
  });

  it('answers valid JSON that fails the model with 400 and every issue with its path in detail', async () => {
    const err = await rejection(() =>
      descriptor.fromHttpRequest(jsonRequest('{"id":7,"items":[{"name":"tea","qty":0},{}],"extra":1}')),
    );
    expect(err.httpStatus).toBe(400);
    const body = err.toBody();
    expect(body.type).toBe('BadInput');
    expect(body.error).toMatch(/^Invalid JSON input received: /);
    expect(body.error).toContain('items.0.qty');
    const detail = body.detail as Array<{ path: Array<string | number>; message: string; code?: string }>;
    expect(detail.map((d) => [d.path, d.code])).toEqual([
      [['id'], 'invalid_type'],
      [['items', 0, 'qty'], 'too_small'],
      [['items', 1, 'name'], 'invalid_type'],
      [[], 'unrecognized_keys'],
    ]);
    for (const d of detail) expect(typeof d.message).toBe('string');
  });

  it('accepts fields a non-strict model does not know and drops them, as zod does', async () => {
    const loose = new JSONDescriptor({ pydantic_model: Item });
    expect(await loose.fromHttpRequest(jsonRequest('{"name":"x","colour":"red"}'))).toEqual({
      name: 'x',
      qty: 1,
    });
  });

  it('coerces where the model says so', async () => {
    const coercing = new JSONDescriptor({ pydantic_model: z.object({ n: z.coerce.number().int() }) });
    expect(await coercing.fromHttpRequest(jsonRequest('{"n":"5"}'))).toEqual({ n: 5 });
  });

  it('validates non-object roots (a model for a list)', async () => {
    const list = new JSONDescriptor({ pydantic_model: z.array(z.number()).max(2) });
    expect(await list.fromHttpRequest(jsonRequest('[1,2]'))).toEqual([1, 2]);
    const err = await rejection(() => list.fromHttpRequest(jsonRequest('[1,2,3]')));
    expect((err.detail as Array<{ code: string }>)[0].code).toBe('too_big');
  });

  it('validates through a non-zod Standard Schema object', async () => {
    const points = new JSONDescriptor({ pydantic_model: pointSchema() });
    expect(await points.fromHttpRequest(jsonRequest('{"x":"1","y":2}'))).toEqual({ x: 1, y: 2 });
    const err = await rejection(() => points.fromHttpRequest(jsonRequest('{"x":1}')));
    expect(err.detail).toEqual([{ path: ['y'], message: 'y must be a number' }]);
  });

  it('reports the model in its spec', () => {
    expect(descriptor.toSpec()).toEqual({
      id: 'tiffin.io.JSON',
      args: { has_pydantic_model: true, has_json_encoder: false },
    });
  });
});
