import { describe, expect, it } from 'vitest';
import { MissingDependencyException } from '../../src/errors/index.js';
import { JSON as JSONDescriptor } from '../../src/io/descriptors/json.js';

describe('JSON with pydantic_model and no schema-model adapter', () => {
  it('throws MissingDependencyException naming @tiffin/io-json', () => {
    expect(() => new JSONDescriptor({ pydantic_model: { some: 'schema' } })).toThrow(
      MissingDependencyException,
    );
    expect(() => new JSONDescriptor({ pydantic_model: { some: 'schema' } })).toThrow(/@tiffin\/io-json/);
  });
});
