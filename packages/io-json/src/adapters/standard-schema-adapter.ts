import type { SchemaDirection, SchemaModelAdapter, SchemaObject, SchemaValidation } from '@tiffin/core';
import { exampleFromJsonSchema } from '../json-schema/example.js';
import { type OpenApiModelSchema, toOpenApiModelSchema } from '../json-schema/openapi-components.js';
import {
  isStandardSchema,
  type StandardJsonSchemaTarget,
  type StandardSchemaV1,
  standardJsonSchemaConverter,
} from '../standard-schema.js';
import { toSchemaIssues } from './issues.js';
import { anonymousModelName, sanitizeComponentName } from './model-name.js';

function asStandard(model: unknown): StandardSchemaV1 {
  if (!isStandardSchema(model))
    throw new TypeError('The standard-schema adapter was given a non-Standard-Schema model');
  return model;
}

// OpenAPI 3.0 first; libraries that only speak JSON Schema drafts still give a useful document.
const TARGETS: readonly StandardJsonSchemaTarget[] = ['openapi-3.0', 'draft-07', 'draft-2020-12'];

/** JSON Schema through the Standard JSON Schema interface, or an unconstrained schema when there is none. */
function generate(model: StandardSchemaV1, direction: SchemaDirection): Record<string, unknown> {
  const converter = standardJsonSchemaConverter(model);
  if (!converter) return {};
  for (const target of TARGETS) {
    try {
      return converter[direction]({ target });
    } catch {
      // The library does not support this target: try the next one.
    }
  }
  return {};
}

const cache = new WeakMap<StandardSchemaV1, Map<SchemaDirection, OpenApiModelSchema>>();

function openApiSchema(model: StandardSchemaV1, direction: SchemaDirection): OpenApiModelSchema {
  let byDirection = cache.get(model);
  if (!byDirection) {
    byDirection = new Map();
    cache.set(model, byDirection);
  }
  const cached = byDirection.get(direction);
  if (cached) return cached;
  const generated = generate(model, direction);
  const title = generated.title;
  const fallback = typeof title === 'string' ? sanitizeComponentName(title) : anonymousModelName(generated);
  const result = toOpenApiModelSchema(generated, fallback);
  byDirection.set(direction, result);
  return result;
}

/**
 * Any Standard Schema v1 object (valibot, arktype, effect schema, hand-written validators): validation
 * through `~standard.validate`, JSON Schema through `~standard.jsonSchema` when the library provides it.
 */
export const standardSchemaModelAdapter: SchemaModelAdapter = {
  name: 'standard-schema',
  accepts: isStandardSchema,
  async validate(model: unknown, value: unknown): Promise<SchemaValidation> {
    const result = await asStandard(model)['~standard'].validate(value);
    if (result.issues) return { ok: false, issues: toSchemaIssues(result.issues) };
    return { ok: true, value: result.value };
  },
  modelName(model: unknown): string {
    return openApiSchema(asStandard(model), 'input').name;
  },
  jsonSchema(model: unknown, direction: SchemaDirection = 'input') {
    const { schema, components } = openApiSchema(asStandard(model), direction);
    return { schema, components };
  },
  example(model: unknown, direction: SchemaDirection = 'input'): unknown {
    const { schema, components } = openApiSchema(asStandard(model), direction);
    return exampleFromJsonSchema(schema as SchemaObject, components);
  },
};
