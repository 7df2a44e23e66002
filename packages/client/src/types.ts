import type { CallOptions } from './options.js';
import type { ApiInfo } from './schema.js';
import type { ApiTypes, SseMessage, WireReceive, WireSend } from './wire.js';

/** The APIs a service type carries (`Service<Apis>`'s type-only `~apis`). */
export type ApisOf<S> = S extends { readonly '~apis'?: infer A } ? NonNullable<A> : never;

/** One typed API call: the input descriptor's client value in, the output descriptor's out. */
export type ApiMethod<A> =
  A extends ApiTypes<infer I, infer O>
    ? (input: WireSend<I>, options?: CallOptions) => Promise<WireReceive<O>>
    : never;

/** Where a task stands: what `GET /<api>/status?id=` and `cancel` answer. */
export interface TaskView {
  id: string;
  api: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  step: number;
  total_steps: number | null;
  /** The error body of a failed or cancelled task. */
  error: { error: string; type: string; code: string; detail?: unknown } | null;
  created_at: string;
  finished_at: string | null;
  expires_at: string | null;
  /** A queued task's place in the queue, from 1 (the next to start); absent once it runs. */
  queue_position?: number;
  /** Rough seconds until an unfinished task ends, or null with nothing to estimate from. */
  eta_seconds?: number | null;
}

/** The task routes of one API served with `task: true`; `I` and `O` are what its synchronous call takes and gives. */
export interface TaskMethods<I = unknown, O = unknown> {
  /** `POST /<api>/submit`: the task's id. */
  submit(input: I, options?: CallOptions): Promise<string>;
  status(id: string, options?: CallOptions): Promise<TaskView>;
  /** The answer of a succeeded task, decoded as the synchronous call's (a 409 `JOB_NOT_DONE` error before). */
  get(id: string, options?: CallOptions): Promise<O>;
  cancel(id: string, options?: CallOptions): Promise<TaskView>;
  /** Server-sent events: `queued`, `started`, `step`, then `done`, `failed` or `cancelled`. */
  events(id: string, options?: CallOptions): Promise<AsyncIterable<SseMessage>>;
}

/** The task methods of one typed API. */
export type ApiTask<A> =
  A extends ApiTypes<infer I, infer O> ? TaskMethods<WireSend<I>, WireReceive<O>> : never;

/** Methods every client has; `$` keeps them apart from API names (which cannot contain `$`). */
export interface ClientMethods {
  /** Call an API by name, untyped. */
  $call(name: string, input: unknown, options?: CallOptions): Promise<unknown>;
  /** The service's APIs as its `/docs.json` describes them (fetched once, then cached). */
  $apis(): Promise<ReadonlyMap<string, ApiInfo>>;
  /** The task routes of an API served as a task (`task: true`), untyped. */
  $task(name: string): TaskMethods;
}

/** A client typed from `typeof svc`: one method per API registered with a literal `name`. */
export type TypedClient<S> = {
  readonly [K in keyof ApisOf<S> & string]: ApiMethod<ApisOf<S>[K]>;
} & Omit<ClientMethods, '$task'> & {
    /** The task routes of an API served as a task (`task: true`), typed like its synchronous call. */
    $task<K extends keyof ApisOf<S> & string>(name: K): ApiTask<ApisOf<S>[K]>;
  };

/** An API method when the service's type is not known. */
export type UntypedApiMethod = (input: unknown, options?: CallOptions) => Promise<unknown>;

/** A client made without a service type: any API name is a method; `$apis()` lists them. */
export type UntypedClient = ClientMethods & Readonly<Record<string, UntypedApiMethod>>;
