import { JSON as JSONDescriptor, type ServerHandle, Service, serve } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonModel } from '../src/index.js';

const Ingredient = z.object({ name: z.string(), grams: z.number().positive() }).meta({ id: 'Ingredient' });
const Recipe = z
  .object({
    title: z.string(),
    servings: z.number().int().min(1).default(2),
    ingredients: z.array(Ingredient),
  })
  .strict()
  .meta({ id: 'Recipe' });
const Summary = z.object({ title: z.string(), totalGrams: z.number() }).meta({ id: 'Summary' });

describe('a service with a zod-model API (end to end over HTTP)', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    const svc = new Service('recipes');
    svc.api({ input: jsonModel(Recipe), output: jsonModel(Summary) }, async function summarize(recipe) {
      const perServing = recipe.ingredients.reduce((sum, i) => sum + i.grams, 0);
      return { title: recipe.title, totalGrams: perServing * recipe.servings };
    });
    svc.api(
      { input: new JSONDescriptor({ pydantic_model: Recipe }), output: new JSONDescriptor() },
      async function echo(r) {
        return r;
      },
    );
    server = await serve(svc, { host: '127.0.0.1', port: 0, logger: false, handleSignals: false });
  });

  afterAll(async () => {
    await server?.close();
  });

  const post = (path: string, body: string) =>
    fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('answers a valid body with the function result, defaults applied', async () => {
    const res = await post('/summarize', '{"title":"Dal","ingredients":[{"name":"lentils","grams":100}]}');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ title: 'Dal', totalGrams: 200 });
  });

  it('answers a body that fails the model with 400 and the issues', async () => {
    const res = await post(
      '/summarize',
      '{"title":"Dal","ingredients":[{"name":"lentils","grams":-1}],"x":1}',
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const body = (await res.json()) as { error: string; type: string; detail: Array<{ path: unknown[] }> };
    expect(body.type).toBe('BadInput');
    expect(body.error).toMatch(/^Invalid JSON input received: /);
    expect(body.detail.map((d) => d.path)).toEqual([['ingredients', 0, 'grams'], []]);
  });

  it('answers invalid JSON with 400', async () => {
    const res = await post('/echo', '{"title":');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { type: string }).type).toBe('BadInput');
  });

  it('publishes the model schemas and examples in /docs.json', async () => {
    const res = await fetch(server.url + '/docs.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      paths: Record<string, { post: Record<string, unknown> }>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Recipe', 'Ingredient', 'Summary']),
    );
    expect(doc.components.schemas.Recipe).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['title', 'ingredients'],
    });
    const operation = doc.paths['/summarize'].post as {
      requestBody: { content: Record<string, { schema: Record<string, unknown>; example: unknown }> };
      responses: Record<string, { content: Record<string, { schema: Record<string, unknown> }> }>;
    };
    const request = operation.requestBody.content['application/json'];
    expect(request.schema).toMatchObject({
      title: 'Recipe',
      properties: { ingredients: { type: 'array', items: { $ref: '#/components/schemas/Ingredient' } } },
    });
    expect(request.example).toEqual({
      title: 'string',
      servings: 2,
      ingredients: [{ name: 'string', grams: 0.5 }],
    });
    expect(Recipe.safeParse(request.example).success).toBe(true);
    expect(operation.responses['200'].content['application/json'].schema).toMatchObject({ title: 'Summary' });
    // Every $ref in the document points at a component that exists.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map(
      (m) => m[1],
    );
    for (const name of refs) expect(doc.components.schemas).toHaveProperty(name);
  });
});
