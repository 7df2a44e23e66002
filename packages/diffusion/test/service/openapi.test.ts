import SwaggerParser from '@apidevtools/swagger-parser';
import { buildOpenApiDocument } from '@tiffin/core/internal';
import type { OpenAPI } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { createDiffusionService } from '../../src/service/diffusion-service.js';
import { tinyDir } from '../helpers/tiny.js';

/** The diffusion service's OpenAPI document (its GET job routes, multi-image answers) is valid OpenAPI 3. */
describe('diffusion OpenAPI document', () => {
  it.each([
    ['text2img', 'sd1'],
    ['img2img', 'sd1'],
    ['text2img', 'sdxl'],
    ['img2img', 'sdxl'],
  ] as const)('is valid for the %s service of a %s folder', async (pipeline, flavour) => {
    // Building the document needs no model worker: the service is only declared, not started.
    const { service } = createDiffusionService({ modelDir: tinyDir(flavour), pipeline });
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
    expect(Object.keys(ok.content)).toEqual(['image/jpeg', 'image/png', 'image/webp', 'multipart/mixed']);
    // The defaults shown (and used) are the family's: diffusers' SDXL pipelines guide at 5 and re-draw 30 %.
    const body = doc.paths[`/${api}`].post.requestBody as {
      content: Record<string, { schema: { properties: Record<string, { default?: unknown }> } }>;
    };
    const schema =
      body.content['application/json']?.schema ??
      (body.content['multipart/form-data'].schema.properties
        .data as unknown as (typeof body.content)[string]['schema']);
    const sdxl = flavour === 'sdxl';
    expect(schema.properties.guidance_scale.default).toBe(sdxl ? 5 : 7.5);
    if (pipeline === 'img2img') expect(schema.properties.strength.default).toBe(sdxl ? 0.3 : 0.8);
    else expect(schema.properties.height.default).toBe(32);
    // SDXL's second prompts and micro-conditioning: [height, width] pairs, shown (SDXL-only) in both families.
    const size = schema.properties.original_size as {
      minItems?: number;
      maxItems?: number;
      default?: unknown;
    };
    expect(size).toMatchObject({ type: 'array', minItems: 2, maxItems: 2, default: null });
    expect(schema.properties.prompt_2).toMatchObject({ type: 'string', default: null });
  });
});
