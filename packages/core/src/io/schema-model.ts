import { MissingDependencyException } from '../errors/index.js';
import type { SchemaObject } from './openapi.js';

/**
 * The seam between core's JSON descriptor and schema-model libraries. Core knows no validation library;
 * `@tiffin/io-json` registers adapters (zod, Standard Schema) when imported. Without one, a JSON
 * descriptor given `pydantic_model` raises MissingDependencyException naming `@tiffin/io-json`.
 */
export interface SchemaIssue {
  /** Path into the value, e.g. `['items', 0, 'name']`. */
  path: Array<string | number>;
  message: string;
  /** The library's machine-readable issue code (zod: `invalid_type`, `unrecognized_keys`, ...), when it has one. */
  code?: string;
}

/** Which side of a model a JSON Schema describes: what clients send (defaults optional) or what they receive. */
export type SchemaDirection = 'input' | 'output';

export type SchemaValidation<T = unknown> = { ok: true; value: T } | { ok: false; issues: SchemaIssue[] };

export interface SchemaModelAdapter {
  /** Name for messages and logs (`zod`, `standard-schema`). */
  readonly name: string;
  /** True when this adapter understands `model`. */
  accepts(model: unknown): boolean;
  /** Validate (and coerce/parse) a plain JSON value. */
  validate(model: unknown, value: unknown): Promise<SchemaValidation>;
  /** Schema name for OpenAPI components (`#/components/schemas/<name>`). */
  modelName(model: unknown): string;
  /** JSON Schema for OpenAPI: the model's own schema plus named sub-schemas, refs as `#/components/schemas/X`. */
  jsonSchema(
    model: unknown,
    direction?: SchemaDirection,
  ): { schema: SchemaObject; components: Record<string, SchemaObject> };
  /** An example value generated from the model's schema, for OpenAPI when no sample was given. */
  example?(model: unknown, direction?: SchemaDirection): unknown;
  /** Turn a validated value back into plain JSON data (e.g. class instances → objects). */
  toPlain?(model: unknown, value: unknown): unknown;
}

const adapters: SchemaModelAdapter[] = [];

/** Register an adapter; later registrations win over earlier ones for the same model. */
export function registerSchemaModelAdapter(adapter: SchemaModelAdapter): void {
  const i = adapters.findIndex((a) => a.name === adapter.name);
  if (i >= 0) adapters.splice(i, 1);
  adapters.unshift(adapter);
}

/** The adapter for `model`; MissingDependencyException when none is registered (io-json not loaded). */
export function schemaModelAdapterFor(model: unknown): SchemaModelAdapter {
  const adapter = adapters.find((a) => a.accepts(model));
  if (adapter) return adapter;
  if (adapters.length === 0) {
    throw MissingDependencyException.forPackage(
      '@tiffin/io-json',
      "JSON({ pydantic_model }) (schema-model validation; add `import '@tiffin/io-json'` to the service)",
    );
  }
  throw new MissingDependencyException(
    `No schema-model adapter accepts the given pydantic_model (registered: ${adapters.map((a) => a.name).join(', ')}); pass a zod schema or a Standard Schema object`,
  );
}
