import { registerSchemaModelAdapter } from '@tiffin/core/descriptor';
import { standardSchemaModelAdapter } from './adapters/standard-schema-adapter.js';
import { zodSchemaModelAdapter } from './adapters/zod-adapter.js';

/**
 * Register io-json's adapters with core. Runs when the package is imported; calling it again is harmless
 * (core replaces an adapter registered under the same name). The most recent registration is tried first,
 * so zod (registered last) is preferred over the generic Standard Schema adapter for zod schemas.
 */
export function registerSchemaModels(): void {
  registerSchemaModelAdapter(standardSchemaModelAdapter);
  registerSchemaModelAdapter(zodSchemaModelAdapter);
}

registerSchemaModels();
