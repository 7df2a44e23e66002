import type { SchemaDirection, SchemaModelAdapter, SchemaObject, SchemaValidation } from '@tiffin/core';
import { z } from 'zod';
import type * as zc from 'zod/v4/core';
import { exampleFromJsonSchema } from '../json-schema/example.js';
import { type OpenApiModelSchema, toOpenApiModelSchema } from '../json-schema/openapi-components.js';
import { toSchemaIssues } from './issues.js';
import { anonymousModelName, sanitizeComponentName } from './model-name.js';

type ZodSchema = zc.$ZodType;

/** Zod 4 schemas (classic and mini) carry their internals under `_zod` and report vendor `zod`. */
export function isZodSchema(model: unknown): model is ZodSchema {
  if (typeof model !== 'object' || model === null || !('_zod' in model)) return false;
  const standard = (model as { '~standard'?: { vendor?: unknown } })['~standard'];
  return standard?.vendor === 'zod';
}

function asZod(model: unknown): ZodSchema {
  if (!isZodSchema(model)) throw new TypeError('The zod schema-model adapter was given a non-zod model');
  return model;
}

/** JSON Schema for what JSON cannot spell natively: dates travel as ISO strings, bigints as integers. */
const unrepresentable: zc.UnrepresentableHandler = ({ zodSchema }) => {
  switch (zodSchema._zod.def.type) {
    case 'date':
      return { type: 'string', format: 'date-time' };
    case 'bigint':
      return { type: 'integer', format: 'int64' };
    default:
      return 'any';
  }
};

const cache = new WeakMap<ZodSchema, Map<SchemaDirection, OpenApiModelSchema>>();

/** The model's OpenAPI 3.0 schema (cached: the docs ask for it several times per API). */
function openApiSchema(model: ZodSchema, direction: SchemaDirection): OpenApiModelSchema {
  let byDirection = cache.get(model);
  if (!byDirection) {
    byDirection = new Map();
    cache.set(model, byDirection);
  }
  const cached = byDirection.get(direction);
  if (cached) return cached;
  const generated = z.toJSONSchema(model, {
    target: 'openapi-3.0',
    io: direction,
    unrepresentable,
  }) as Record<string, unknown>;
  const meta = z.globalRegistry.get(model);
  const fallback =
    typeof meta?.title === 'string' ? sanitizeComponentName(meta.title) : anonymousModelName(generated);
  const result = toOpenApiModelSchema(generated, fallback);
  byDirection.set(direction, result);
  return result;
}

/**
 * zod 4: validation through zod's own async parser (so `.default()`, coercion, `.strict()`, transforms and
 * async refinements behave exactly as in zod), JSON Schema through `z.toJSONSchema` (OpenAPI 3.0 target),
 * model names from `.meta({ id })` (or `title`).
 */
export const zodSchemaModelAdapter: SchemaModelAdapter = {
  name: 'zod',
  accepts: isZodSchema,
  async validate(model: unknown, value: unknown): Promise<SchemaValidation> {
    const result = await z.safeParseAsync(asZod(model), value);
    if (result.success) return { ok: true, value: result.data };
    return { ok: false, issues: toSchemaIssues(result.error.issues) };
  },
  modelName(model: unknown): string {
    return openApiSchema(asZod(model), 'input').name;
  },
  jsonSchema(model: unknown, direction: SchemaDirection = 'input') {
    const { schema, components } = openApiSchema(asZod(model), direction);
    return { schema, components };
  },
  example(model: unknown, direction: SchemaDirection = 'input'): unknown {
    const { schema, components } = openApiSchema(asZod(model), direction);
    return exampleFromJsonSchema(schema as SchemaObject, components);
  },
};
