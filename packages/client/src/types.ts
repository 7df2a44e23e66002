import type { CallOptions } from './options.js';
import type { ApiInfo } from './schema.js';
import type { ApiTypes, WireReceive, WireSend } from './wire.js';

/** The APIs a service type carries (`Service<Apis>`'s type-only `~apis`). */
export type ApisOf<S> = S extends { readonly '~apis'?: infer A } ? NonNullable<A> : never;

/** One typed API call: the input descriptor's client value in, the output descriptor's out. */
export type ApiMethod<A> =
  A extends ApiTypes<infer I, infer O>
    ? (input: WireSend<I>, options?: CallOptions) => Promise<WireReceive<O>>
    : never;

/** Methods every client has; `$` keeps them apart from API names (which cannot contain `$`). */
export interface ClientMethods {
  /** Call an API by name, untyped. */
  $call(name: string, input: unknown, options?: CallOptions): Promise<unknown>;
  /** The service's APIs as its `/docs.json` describes them (fetched once, then cached). */
  $apis(): Promise<ReadonlyMap<string, ApiInfo>>;
}

/** A client typed from `typeof svc`: one method per API registered with a literal `name`. */
export type TypedClient<S> = {
  readonly [K in keyof ApisOf<S> & string]: ApiMethod<ApisOf<S>[K]>;
} & ClientMethods;

/** An API method when the service's type is not known. */
export type UntypedApiMethod = (input: unknown, options?: CallOptions) => Promise<unknown>;

/** A client made without a service type: any API name is a method; `$apis()` lists them. */
export type UntypedClient = ClientMethods & Readonly<Record<string, UntypedApiMethod>>;
