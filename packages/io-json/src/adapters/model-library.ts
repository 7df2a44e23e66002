import type { SchemaObject } from '@tiffin/core';
import type { SchemaDirection, SchemaModelAdapter, SchemaValidation } from '@tiffin/core/descriptor';
import { exampleFromJsonSchema } from '../json-schema/example.js';
import { type OpenApiModelSchema, toOpenApiModelSchema } from '../json-schema/openapi-components.js';
import { anonymousModelName, sanitizeComponentName } from './model-name.js';

/** A model's JSON Schema as its library generates it, and the title the library knows it by (if any). */
export interface GeneratedJsonSchema {
  readonly jsonSchema: Record<string, unknown>;
  readonly title: unknown;
}

/** What one schema-model library contributes; `schemaModelAdapter` builds the rest of the adapter. */
export interface ModelLibrary<Model extends object> {
  readonly name: string;
  accepts(model: unknown): model is Model;
  /** The TypeError message when a model of another library reaches this adapter. */
  readonly foreignModelMessage: string;
  validate(model: Model, value: unknown): Promise<SchemaValidation>;
  generateJsonSchema(model: Model, direction: SchemaDirection): GeneratedJsonSchema;
}

/**
 * A `SchemaModelAdapter` for one library: OpenAPI schemas are generated once per model and direction
 * (the docs ask for them several times per API) and named by the model's title, or by a digest of the
 * schema when it has none.
 */
export function schemaModelAdapter<Model extends object>(library: ModelLibrary<Model>): SchemaModelAdapter {
  const cache = new WeakMap<Model, Map<SchemaDirection, OpenApiModelSchema>>();

  function own(model: unknown): Model {
    if (!library.accepts(model)) throw new TypeError(library.foreignModelMessage);
    return model;
  }

  function openApiSchema(model: unknown, direction: SchemaDirection): OpenApiModelSchema {
    const owned = own(model);
    let byDirection = cache.get(owned);
    if (!byDirection) {
      byDirection = new Map();
      cache.set(owned, byDirection);
    }
    const cached = byDirection.get(direction);
    if (cached) return cached;
    const { jsonSchema, title } = library.generateJsonSchema(owned, direction);
    const fallback =
      typeof title === 'string' ? sanitizeComponentName(title) : anonymousModelName(jsonSchema);
    const result = toOpenApiModelSchema(jsonSchema, fallback);
    byDirection.set(direction, result);
    return result;
  }

  return {
    name: library.name,
    accepts: (model: unknown) => library.accepts(model),
    async validate(model: unknown, value: unknown): Promise<SchemaValidation> {
      return library.validate(own(model), value);
    },
    modelName(model: unknown): string {
      return openApiSchema(model, 'input').name;
    },
    jsonSchema(model: unknown, direction: SchemaDirection = 'input') {
      const { schema, components } = openApiSchema(model, direction);
      return { schema, components };
    },
    example(model: unknown, direction: SchemaDirection = 'input'): unknown {
      const { schema, components } = openApiSchema(model, direction);
      return exampleFromJsonSchema(schema as SchemaObject, components);
    },
  };
}
