/**
 * The Standard Schema v1 and Standard JSON Schema v1 interfaces (https://standardschema.dev), written out
 * here so that any library implementing them (valibot, arktype, effect, zod, ...) is accepted without
 * io-json depending on it. Only the members Tiffin uses are declared.
 */
export type StandardPathSegment = PropertyKey | { readonly key: PropertyKey };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<StandardPathSegment> | undefined;
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** JSON Schema targets of the Standard JSON Schema interface. */
export type StandardJsonSchemaTarget = 'draft-2020-12' | 'draft-07' | 'openapi-3.0';

export interface StandardJsonSchemaConverter {
  readonly input: (options: { readonly target: string }) => Record<string, unknown>;
  readonly output: (options: { readonly target: string }) => Record<string, unknown>;
}

/** Input type of a Standard Schema (what a client sends). */
export type InferStandardInput<S> = S extends StandardSchemaV1<infer In, unknown> ? In : never;

/** Output type of a Standard Schema (what the API function receives). */
export type InferStandardOutput<S> = S extends StandardSchemaV1<unknown, infer Out> ? Out : never;

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return (
    typeof props === 'object' &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { validate?: unknown }).validate === 'function'
  );
}

/** The Standard JSON Schema converter of `schema`, when its library provides one. */
export function standardJsonSchemaConverter(schema: StandardSchemaV1): StandardJsonSchemaConverter | null {
  const converter = (schema['~standard'] as { jsonSchema?: unknown }).jsonSchema;
  if (typeof converter !== 'object' || converter === null) return null;
  const { input, output } = converter as { input?: unknown; output?: unknown };
  return typeof input === 'function' && typeof output === 'function'
    ? (converter as StandardJsonSchemaConverter)
    : null;
}
