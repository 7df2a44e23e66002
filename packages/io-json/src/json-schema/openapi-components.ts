import type { SchemaObject } from '@tiffin/core';

/** A model's JSON Schema split the way OpenAPI wants it: the schema itself plus named components. */
export interface OpenApiModelSchema {
  /** Name of the model: its own definition name when the generator gave it one, else `fallbackName`. */
  name: string;
  /** True when the library named the model (zod `.meta({id})`), false when `fallbackName` was used. */
  named: boolean;
  schema: SchemaObject;
  /** Every named schema, the model's own included, refs written as `#/components/schemas/<Name>`. */
  components: Record<string, SchemaObject>;
}

const COMPONENTS_PREFIX = '#/components/schemas/';
const LOCAL_DEFINITION_REF = /^#\/(?:definitions|\$defs)\/(.+)$/;
// Keys generators invent for unnamed recursive schemas; they would collide between models.
const GENERATED_DEFINITION_KEY = /^__schema\d+$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function decodePointerToken(token: string): string {
  return decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Deep copy with local definition refs rewritten to component refs and `$id`/`$schema` dropped. */
function rewrite(value: unknown, renamed: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewrite(item, renamed));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$id' || key === '$schema') continue;
    if (key === '$ref' && typeof child === 'string') {
      const local = LOCAL_DEFINITION_REF.exec(child);
      if (local) {
        const name = decodePointerToken(local[1]);
        out.$ref = COMPONENTS_PREFIX + (renamed.get(name) ?? name);
        continue;
      }
    }
    out[key] = rewrite(child, renamed);
  }
  return out;
}

/**
 * Turn a generator's JSON Schema (with `definitions` or `$defs`) into an OpenAPI schema and components.
 * When the root is only a `$ref` to one of its own definitions (a named model), that definition is the
 * schema and its name is the model's name.
 */
export function toOpenApiModelSchema(
  jsonSchema: Record<string, unknown>,
  fallbackName: string,
): OpenApiModelSchema {
  const definitions: Record<string, unknown> = {
    ...(isRecord(jsonSchema.definitions) ? jsonSchema.definitions : {}),
    ...(isRecord(jsonSchema.$defs) ? jsonSchema.$defs : {}),
  };
  const root: Record<string, unknown> = { ...jsonSchema };
  delete root.definitions;
  delete root.$defs;

  let name = fallbackName;
  let named = false;
  const rootRef = typeof root.$ref === 'string' ? LOCAL_DEFINITION_REF.exec(root.$ref) : null;
  const rootDefinitionName =
    rootRef && Object.keys(root).length === 1 ? decodePointerToken(rootRef[1]) : null;
  if (
    rootDefinitionName !== null &&
    rootDefinitionName in definitions &&
    !GENERATED_DEFINITION_KEY.test(rootDefinitionName)
  ) {
    name = rootDefinitionName;
    named = true;
  }

  const renamed = new Map<string, string>();
  for (const key of Object.keys(definitions)) {
    if (GENERATED_DEFINITION_KEY.test(key)) renamed.set(key, `${name}${key.replace(/^__schema/, '_Schema')}`);
  }

  const components: Record<string, SchemaObject> = {};
  for (const [key, definition] of Object.entries(definitions)) {
    components[renamed.get(key) ?? key] = rewrite(definition, renamed) as SchemaObject;
  }

  let schema: SchemaObject;
  if (rootDefinitionName !== null && rootDefinitionName in definitions) {
    schema = components[renamed.get(rootDefinitionName) ?? rootDefinitionName];
  } else {
    schema = rewrite(root, renamed) as SchemaObject;
  }
  if (named && schema.title === undefined) schema = { title: name, ...schema };
  if (named) components[name] = schema;
  return { name, named, schema, components };
}
