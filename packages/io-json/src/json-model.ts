import type { WireTypes } from '@tiffin/core';
import { type IODescriptor, JSON as JSONDescriptor } from '@tiffin/core';
import type { JSONOptions } from '@tiffin/core/descriptor';
import './register.js';
import type { InferStandardInput, InferStandardOutput, StandardSchemaV1 } from './standard-schema.js';

/**
 * A JSON descriptor whose value type is the model's: `In` is what the API function receives (the parsed,
 * validated value, e.g. `z.infer<typeof schema>`), `Out` is what a function returns when the descriptor
 * is an output. Everything else is core's JSON descriptor.
 */
export type JSONModelDescriptor<In, Out = In, Send = In> = Omit<
  JSONDescriptor,
  'fromHttpRequest' | 'toHttpResponse' | 'fromProto' | 'toProto' | 'fromTensors' | 'toTensors' | '~wire'
> &
  IODescriptor<In, Out> & {
    /** Clients send the model's input type (before coercion and defaults) and receive its output type. */
    readonly '~wire'?: WireTypes<Send, Out>;
  };

/** Options of `jsonModel`: core's JSON options without the model, which is the first argument. */
export type JSONModelOptions = Omit<JSONOptions, 'pydantic_model'>;

/**
 * `new JSON({ pydantic_model: schema, ...options })` with the model's type carried through, so
 * `svc.api({ input: jsonModel(User), ... }, async (user) => ...)` types `user` as `z.infer<typeof User>`.
 * Core's `JSON` is typed `unknown` in and out; this helper only adds types, the descriptor is the same.
 */
export function jsonModel<S extends StandardSchemaV1>(
  schema: S,
  options: JSONModelOptions = {},
): JSONModelDescriptor<InferStandardOutput<S>, InferStandardOutput<S>, InferStandardInput<S>> {
  const descriptor = new JSONDescriptor({ ...options, pydantic_model: schema });
  return descriptor as unknown as JSONModelDescriptor<
    InferStandardOutput<S>,
    InferStandardOutput<S>,
    InferStandardInput<S>
  >;
}
