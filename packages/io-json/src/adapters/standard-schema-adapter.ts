import type { SchemaDirection, SchemaModelAdapter } from '@tiffin/core/descriptor';
import {
  isStandardSchema,
  type StandardJsonSchemaTarget,
  type StandardSchemaV1,
  standardJsonSchemaConverter,
} from '../standard-schema.js';
import { toSchemaIssues } from './issues.js';
import { schemaModelAdapter } from './model-library.js';

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

/**
 * Any Standard Schema v1 object (valibot, arktype, effect schema, hand-written validators): validation
 * through `~standard.validate`, JSON Schema through `~standard.jsonSchema` when the library provides it.
 */
export const standardSchemaModelAdapter: SchemaModelAdapter = schemaModelAdapter<StandardSchemaV1>({
  name: 'standard-schema',
  accepts: isStandardSchema,
  foreignModelMessage: 'The standard-schema adapter was given a non-Standard-Schema model',
  async validate(model, value) {
    const result = await model['~standard'].validate(value);
    if (result.issues) return { ok: false, issues: toSchemaIssues(result.issues) };
    return { ok: true, value: result.value };
  },
  generateJsonSchema(model, direction) {
    const jsonSchema = generate(model, direction);
    return { jsonSchema, title: jsonSchema.title };
  },
});
