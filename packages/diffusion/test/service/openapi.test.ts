import SwaggerParser from '@apidevtools/swagger-parser';
import { buildOpenApiDocument } from '@tiffin/core/internal';
import type { OpenAPI } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';

/** The diffusion service's OpenAPI document (its GET job routes, multi-image answers) is valid OpenAPI 3. */
describe('diffusion OpenAPI document', () => {
  it.each(['text2image', 'img2img'] as const)('is valid for the %s service', async (pipeline) => {
    // Building the document needs no model worker: the service is only declared, not started.
    const { service } = createDiffusionService({ modelDir: tinyDir('sd1'), pipeline });
    const doc = buildOpenApiDocument(service) as unknown as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    await SwaggerParser.validate(structuredClone(doc) as unknown as OpenAPI.Document);
    const api = pipeline === 'img2img' ? 'img2img' : 'text2img';
    expect(Object.keys(doc.paths[`/${api}/status`])).toEqual(['get']);
    expect(doc.paths[`/${api}/status`].get.requestBody).toBeUndefined();
    expect(Object.keys(doc.paths[`/${api}/cancel`])).toEqual(['post']);
    expect(Object.keys(doc.paths['/loras'])).toEqual(['get']);
    const ok = doc.paths[`/${api}`].post.responses['200'] as { content: Record<string, unknown> };
    expect(Object.keys(ok.content)).toEqual(['image/jpeg', 'multipart/mixed']);
  });
});
