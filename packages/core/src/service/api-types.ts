import type { IODescriptor } from '../io/descriptor.js';

/** Type-only record of one API's descriptors, kept in `Service`'s type for typed clients. */
export interface ApiTypes<I extends IODescriptor = IODescriptor, O extends IODescriptor = IODescriptor> {
  readonly input: I;
  readonly output: O;
}

/** The APIs a `Service` type carries, by name (none to start with). */
export type ApiTypesMap = Record<string, ApiTypes>;

/** `Apis` plus API `N` (unchanged when `N` is not a literal name). */
export type WithApi<
  Apis extends ApiTypesMap,
  N extends string,
  I extends IODescriptor,
  O extends IODescriptor,
> = string extends N ? Apis : Apis & { [K in N]: ApiTypes<I, O> };
