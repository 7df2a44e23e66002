// Importing the package registers its schema-model adapters with @tiffin/core (see register.ts).

export { standardSchemaModelAdapter } from './adapters/standard-schema-adapter.js';
export { isZodSchema, zodSchemaModelAdapter } from './adapters/zod-adapter.js';
export { type JSONModelDescriptor, type JSONModelOptions, jsonModel } from './json-model.js';
export { exampleFromJsonSchema } from './json-schema/example.js';
export { type OpenApiModelSchema, toOpenApiModelSchema } from './json-schema/openapi-components.js';
export { registerSchemaModels } from './register.js';
export {
  type InferStandardInput,
  type InferStandardOutput,
  isStandardSchema,
  type StandardIssue,
  type StandardJsonSchemaConverter,
  type StandardResult,
  type StandardSchemaV1,
  standardJsonSchemaConverter,
} from './standard-schema.js';
