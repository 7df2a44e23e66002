import type { SchemaObject } from '@tiffin/core';
import { type Dtype, openapiType } from '../table/dtype.js';
import type { Orient } from '../table/orient.js';

function properties(dtypes: Record<string, Dtype>, wrap: (t: SchemaObject) => SchemaObject): SchemaObject {
  return Object.fromEntries(Object.entries(dtypes).map(([c, d]) => [c, wrap({ type: openapiType(d) })]));
}

/** JSON Schema of a DataFrame body in `orient` layout (docs/spec/io-descriptors.md §3.7); `{type: object}` without dtypes. */
export function frameSchema(orient: Orient, dtypes: Record<string, Dtype> | null): SchemaObject {
  if (!dtypes)
    return orient === 'records' || orient === 'values'
      ? { type: 'array', items: { type: 'object' } }
      : { type: 'object' };
  const row: SchemaObject = { type: 'object', properties: properties(dtypes, (t) => t) };
  switch (orient) {
    case 'records':
      return { type: 'array', items: row };
    case 'index':
      return { type: 'object', additionalProperties: row };
    case 'columns':
      return {
        type: 'object',
        properties: properties(dtypes, (t) => ({ type: 'object', additionalProperties: t })),
      };
    case 'values':
      return { type: 'array', items: { type: 'array', items: {} } };
    case 'split':
      return {
        type: 'object',
        properties: {
          columns: { type: 'array', items: { type: 'string' } },
          index: { type: 'array', items: {} },
          data: { type: 'array', items: { type: 'array', items: {} } },
        },
        required: ['data'],
      };
    case 'table':
      return {
        type: 'object',
        properties: { schema: { type: 'object' }, data: { type: 'array', items: row } },
        required: ['schema', 'data'],
      };
  }
}

/** JSON Schema of a Series body in `orient` layout (docs/spec/io-descriptors.md §4). */
export function seriesSchema(orient: Orient, dtype: Dtype | null): SchemaObject {
  const item: SchemaObject = dtype ? { type: openapiType(dtype) } : {};
  switch (orient) {
    case 'records':
    case 'values':
      return { type: 'array', items: item };
    case 'index':
    case 'columns':
      return { type: 'object', additionalProperties: item };
    case 'split':
      return {
        type: 'object',
        properties: {
          name: { type: 'string', nullable: true },
          index: { type: 'array', items: {} },
          data: { type: 'array', items: item },
        },
        required: ['data'],
      };
    case 'table':
      return {
        type: 'object',
        properties: { schema: { type: 'object' }, data: { type: 'array', items: { type: 'object' } } },
      };
  }
}
