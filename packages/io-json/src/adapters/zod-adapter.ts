import type { SchemaModelAdapter } from '@tiffin/core/descriptor';
import { z } from 'zod';
import type * as zc from 'zod/v4/core';
import { toSchemaIssues } from './issues.js';
import { schemaModelAdapter } from './model-library.js';

type ZodSchema = zc.$ZodType;

/** Zod 4 schemas (classic and mini) carry their internals under `_zod` and report vendor `zod`. */
export function isZodSchema(model: unknown): model is ZodSchema {
  if (typeof model !== 'object' || model === null || !('_zod' in model)) return false;
  const standard = (model as { '~standard'?: { vendor?: unknown } })['~standard'];
  return standard?.vendor === 'zod';
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

/**
 * zod 4: validation through zod's own async parser (so `.default()`, coercion, `.strict()`, transforms and
 * async refinements behave exactly as in zod), JSON Schema through `z.toJSONSchema` (OpenAPI 3.0 target),
 * model names from `.meta({ id })` (or `title`).
 */
export const zodSchemaModelAdapter: SchemaModelAdapter = schemaModelAdapter<ZodSchema>({
  name: 'zod',
  accepts: isZodSchema,
  foreignModelMessage: 'The zod schema-model adapter was given a non-zod model',
  async validate(model, value) {
    const result = await z.safeParseAsync(model, value);
    if (result.success) return { ok: true, value: result.data };
    return { ok: false, issues: toSchemaIssues(result.error.issues) };
  },
  generateJsonSchema(model, direction) {
    const jsonSchema = z.toJSONSchema(model, {
      target: 'openapi-3.0',
      io: direction,
      unrepresentable,
    }) as Record<string, unknown>;
    return { jsonSchema, title: z.globalRegistry.get(model)?.title };
  },
});
