import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { File, Service, serve } from '../../src/index.js';

/*
 * A file input shows a file chooser on the API page, which no JSON example fills: the API's example (text or
 * bytes) is served as a file that /docs.json links and the page pre-fills, and posting it as it is works.
 */
const CSV = 'a,b\n1,2\n';
const svc = new Service('file_examples')
  .api(
    {
      name: 'csv_rows',
      input: new File({ mime_type: 'text/csv' }),
      output: new File({ mime_type: 'text/csv' }),
      example: CSV,
    },
    (file: { bytes: Buffer }) => file.bytes,
  )
  .api(
    { name: 'no_example', input: new File(), output: new File() },
    (file: { bytes: Buffer }) => file.bytes,
  );

let server: Awaited<ReturnType<typeof serve>>;
beforeAll(async () => {
  server = await serve(svc, { port: 0, logger: false, handleSignals: false });
});
afterAll(async () => server?.close());

interface Media {
  example?: unknown;
  'x-tiffin-example-files'?: Record<string, string>;
  examples?: { example?: { summary?: string; externalValue?: string } };
}
type Doc = { paths: Record<string, { post: { requestBody: { content: Record<string, Media> } } }> };

describe('a File input with an example', () => {
  it('links the example as a file the server serves, and the API takes it as it is', async () => {
    const doc = (await (await fetch(`${server.url}/docs.json`)).json()) as Doc;
    await SwaggerParser.validate(structuredClone(doc) as unknown as OpenAPI.Document);
    const content = doc.paths['/csv_rows']!.post.requestBody.content;
    expect(Object.keys(content)[0]).toBe('text/csv');
    // The text stays the inline example; the file that stands for it is linked beside it.
    expect(content['text/csv']!.example).toBe(CSV);
    expect(content['text/csv']!['x-tiffin-example-files']).toEqual({ '': 'docs/examples/csv_rows' });
    expect(content['text/csv']!.examples).toBeUndefined();
    const file = await fetch(`${server.url}/docs/examples/csv_rows`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('text/csv');
    expect(file.headers.get('content-disposition')).toBe('inline; filename="example.csv"');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(bytes.toString()).toBe(CSV);
    const answer = await fetch(`${server.url}/csv_rows`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: bytes,
    });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe(CSV);
  });

  it('links nothing where the API gave no example', async () => {
    const doc = (await (await fetch(`${server.url}/docs.json`)).json()) as Doc;
    const content = doc.paths['/no_example']!.post.requestBody.content;
    for (const media of Object.values(content)) expect(media.examples).toBeUndefined();
    expect((await fetch(`${server.url}/docs/examples/no_example`)).status).toBe(404);
  });
});
