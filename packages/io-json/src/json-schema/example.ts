import type { SchemaObject } from '@tiffin/core';

const MAX_DEPTH = 8;
const COMPONENTS_PREFIX = '#/components/schemas/';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringExample(schema: SchemaObject): string {
  switch (schema.format) {
    case 'date-time':
      return '2024-01-01T00:00:00Z';
    case 'date':
      return '2024-01-01';
    case 'time':
      return '00:00:00';
    case 'email':
      return 'user@example.com';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    case 'uri':
    case 'url':
      return 'https://example.com';
    case 'ipv4':
      return '127.0.0.1';
    case 'ipv6':
      return '::1';
    default: {
      const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
      const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
      if (min > 6) return 'x'.repeat(min);
      return 'string'.slice(0, Math.max(0, Math.min(6, max)));
    }
  }
}

interface NumericBound {
  readonly bound: number;
  readonly exclusive: boolean;
}

/**
 * One side's bound. OpenAPI 3.0 / draft-04 write an exclusive bound as a boolean next to
 * minimum/maximum; later drafts as the number itself.
 */
function numericBound(exclusiveKeyword: unknown, inclusiveKeyword: unknown): NumericBound | null {
  if (typeof exclusiveKeyword === 'number') return { bound: exclusiveKeyword, exclusive: true };
  if (typeof inclusiveKeyword === 'number') {
    return { bound: inclusiveKeyword, exclusive: exclusiveKeyword === true };
  }
  return null;
}

function numberExample(schema: SchemaObject, integer: boolean): number {
  const lower = numericBound(schema.exclusiveMinimum, schema.minimum);
  const upper = numericBound(schema.exclusiveMaximum, schema.maximum);
  const step = integer ? 1 : 0.5;
  let value = 0;
  if (lower && (value < lower.bound || (lower.exclusive && value === lower.bound))) {
    value = lower.exclusive ? (integer ? Math.floor(lower.bound) + 1 : lower.bound + step) : lower.bound;
  }
  if (upper && (value > upper.bound || (upper.exclusive && value === upper.bound))) {
    value = upper.exclusive ? (integer ? Math.ceil(upper.bound) - 1 : upper.bound - step) : upper.bound;
  }
  return integer ? Math.round(value) : value;
}

/**
 * A plausible example value for a JSON Schema: `example`/`examples`/`default`/`const`/`enum` when the
 * schema gives one, else a value of the right type. Refs resolve against `components`; recursion stops
 * at a fixed depth (a recursive model's example ends with an empty value).
 */
export function exampleFromJsonSchema(
  schema: SchemaObject,
  components: Record<string, SchemaObject>,
  depth = 0,
  resolving: ReadonlySet<string> = new Set(),
): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];

  if (typeof schema.$ref === 'string' && schema.$ref.startsWith(COMPONENTS_PREFIX)) {
    const name = schema.$ref.slice(COMPONENTS_PREFIX.length);
    const target = components[name];
    if (!target || resolving.has(name) || depth >= MAX_DEPTH) return null;
    return exampleFromJsonSchema(target, components, depth + 1, new Set([...resolving, name]));
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const members = schema[key];
    if (Array.isArray(members) && members.length > 0) {
      if (key === 'allOf' && members.length > 1) {
        const parts = members.map((m) =>
          isRecord(m) ? exampleFromJsonSchema(m, components, depth + 1, resolving) : null,
        );
        if (parts.every(isRecord)) return Object.assign({}, ...parts);
      }
      const first = members.find((m) => isRecord(m) && m.type !== 'null') ?? members[0];
      return isRecord(first) ? exampleFromJsonSchema(first, components, depth + 1, resolving) : null;
    }
  }

  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return stringExample(schema);
    case 'integer':
      return numberExample(schema, true);
    case 'number':
      return numberExample(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      if (depth >= MAX_DEPTH) return [];
      if (Array.isArray(schema.prefixItems)) {
        return schema.prefixItems.map((item) =>
          isRecord(item) ? exampleFromJsonSchema(item, components, depth + 1, resolving) : null,
        );
      }
      if (Array.isArray(schema.items)) {
        return schema.items.map((item) =>
          isRecord(item) ? exampleFromJsonSchema(item, components, depth + 1, resolving) : null,
        );
      }
      if (!isRecord(schema.items)) return [];
      const item = exampleFromJsonSchema(schema.items, components, depth + 1, resolving);
      const count = typeof schema.minItems === 'number' && schema.minItems > 1 ? schema.minItems : 1;
      return Array.from({ length: count }, () => item);
    }
    case 'object':
    case undefined: {
      if (!isRecord(schema.properties)) return type === 'object' ? {} : null;
      if (depth >= MAX_DEPTH) return {};
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(schema.properties)) {
        if (isRecord(property)) out[key] = exampleFromJsonSchema(property, components, depth + 1, resolving);
      }
      return out;
    }
    default:
      return null;
  }
}
