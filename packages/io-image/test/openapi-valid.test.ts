import SwaggerParser from '@apidevtools/swagger-parser';
import { JSONDescriptor, Multipart, Service } from '@tiffin/core';
import { buildOpenApiDocument } from '@tiffin/core/internal';
import type { OpenAPI } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { Image } from '../src/index.js';

describe('/docs.json with Image is valid OpenAPI 3', () => {
  it('validates for Image in and out, restricted types, and Image inside Multipart', async () => {
    const svc = new Service('images');
    svc.api({ name: 'any', input: new Image(), output: new Image({ mime_type: 'image/png' }) }, (i) => i);
    svc.api(
      {
        name: 'restricted',
        input: new Image({ allowed_mime_types: ['image/jpeg', 'image/webp'], pilmode: 'L' }),
        output: new Image({ mime_type: 'image/webp' }),
      },
      (i) => i,
    );
    svc.api(
      {
        name: 'edit',
        input: new Multipart({ img: new Image(), data: new JSONDescriptor() }),
        output: new Image(),
      },
      ({ img }) => img,
    );
    const doc = buildOpenApiDocument(svc);
    await expect(SwaggerParser.validate(structuredClone(doc) as OpenAPI.Document)).resolves.toBeTruthy();
  });
});
