import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import {
  File,
  IODescriptor,
  JSONDescriptor,
  Multipart,
  NDArray,
  NumpyNdarray,
  Service,
  Text,
} from '../../src/index.js';
import { buildOpenApiDocument } from '../../src/openapi/document.js';

/** Validate as generators and gateways do (the validator resolves $refs in place, so give it a copy). */
async function validate(doc: unknown): Promise<void> {
  await SwaggerParser.validate(structuredClone(doc) as OpenAPI.Document);
}

/** A user descriptor with none of the OpenAPI hooks: the document must still be valid. */
class Bare extends IODescriptor<string, string> {
  readonly protoFields = [] as const;
  get mimeType(): string | null {
    return null;
  }
  fromHttpRequest(): Promise<string> {
    return Promise.resolve('');
  }
  toHttpResponse(): never {
    throw new Error('unused');
  }
}

function everyDescriptor(): Service {
  const svc = new Service('every-descriptor', { version: '2.0.0', doc: 'All core descriptors.' });
  const echo = <T>(x: T) => x;
  svc.api({ name: 'nd', input: new NumpyNdarray(), output: new NumpyNdarray() }, echo);
  svc.api(
    {
      name: 'nd_typed',
      input: NumpyNdarray.fromSample(NDArray.from([[1, 2, 3, 4]], 'float32'), { enforce_shape: true }),
      output: new NumpyNdarray({ dtype: 'int64', shape: [-1] }),
    },
    () => [1],
  );
  svc.api(
    { name: 'json', input: new JSONDescriptor(), output: JSONDescriptor.fromSample({ a: [1, 'x'] }) },
    echo,
  );
  svc.api({ name: 'text', input: new Text(), output: Text.fromSample('hello') }, echo);
  // A task API: its /submit, /status, /get, /cancel and /events routes are in the document too.
  svc.api({ name: 'json_task', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true }, echo);
  svc.api({ name: 'sse', input: new Text(), output: new Text({ content_type: 'text/event-stream' }) }, echo);
  svc.api({ name: 'file', input: new File(), output: new File({ mime_type: 'text/csv' }) }, () =>
    Buffer.from('a'),
  );
  svc.api(
    {
      name: 'multi',
      input: new Multipart({
        arr: new NumpyNdarray(),
        note: new Text(),
        doc: new File(),
        meta: new JSONDescriptor(),
      }),
      output: new Multipart({ text: new Text(), json: new JSONDescriptor() }),
    },
    () => ({ text: 'a', json: {} }),
  );
  svc.api({ name: 'bare', input: new Bare(), output: new Bare(), route: '/custom/bare' }, echo);
  return svc;
}

describe('/docs.json is valid OpenAPI 3', () => {
  it('validates for every core descriptor (and a descriptor without OpenAPI hooks)', async () => {
    const doc = buildOpenApiDocument(everyDescriptor());
    await expect(validate(doc)).resolves.toBeUndefined();
  });

  it('carries no Swagger 2.0 keys; Tiffin facts stay under x- keys', () => {
    const doc = buildOpenApiDocument(everyDescriptor());
    const op = doc.paths['/nd']!.post as Record<string, unknown>;
    expect(op).not.toHaveProperty('consumes');
    expect(op).not.toHaveProperty('produces');
    expect(op['x-tiffin-name']).toBe('nd');
    const body = op.requestBody as Record<string, unknown>;
    expect(body['x-tiffin-io-descriptor']).toMatchObject({ id: 'tiffin.io.NumpyNdarray' });
    const operationFields = ['responses', 'tags', 'summary', 'description', 'requestBody', 'operationId'];
    expect(Object.keys(op).filter((k) => !k.startsWith('x-') && !operationFields.includes(k))).toEqual([]);
  });

  it('a document the validator rejects is reported (the check is real)', async () => {
    const doc = buildOpenApiDocument(everyDescriptor()) as unknown as Record<string, unknown>;
    const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
    paths['/nd']!.post!.consumes = ['application/json'];
    await expect(validate(doc)).rejects.toThrow(/additional properties|consumes/i);
  });
});
