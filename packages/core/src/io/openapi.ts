/** The OpenAPI 3.0 fragments descriptors contribute (loosely typed: they are JSON documents). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type SchemaObject = { [key: string]: unknown };

export interface MediaTypeObject {
  schema: SchemaObject;
  example?: unknown;
  /** Named examples; Tiffin gives one with an `externalValue` link to an example file (see ExampleFile). */
  examples?: Record<string, { summary?: string; value?: unknown; externalValue?: string }>;
  /** Multipart parts' example files: part name → link (relative to the API page). */
  'x-tiffin-example-files'?: Record<string, string>;
}

export interface RequestBodyObject {
  content: Record<string, MediaTypeObject>;
  required: true;
  'x-tiffin-io-descriptor': DescriptorSpec | null;
}

export interface ResponseObject {
  description: string;
  content: Record<string, MediaTypeObject>;
  'x-tiffin-io-descriptor': DescriptorSpec | null;
}

export interface ComponentsObject {
  schemas?: Record<string, SchemaObject>;
}

/** A serializable description of a descriptor: `{id, args}` (docs/spec/io-descriptors.md §1.1, D6 ids). */
export interface DescriptorSpec {
  id: string | null;
  args?: Record<string, unknown>;
}
