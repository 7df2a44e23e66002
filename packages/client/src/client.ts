import { decodeOutput } from './decode.js';
import { encodeInput } from './encode.js';
import { TiffinClientError } from './errors.js';
import type { CallOptions, ClientOptions } from './options.js';
import { type ApiInfo, apisFromOpenApi } from './schema.js';
import { taskMethods } from './tasks.js';
import { send } from './transport.js';
import type { ClientMethods, TypedClient, UntypedApiMethod, UntypedClient } from './types.js';

/**
 * A client for a Tiffin service over HTTP (fetch only: Node 20+ and browsers).
 *
 * `createClient<typeof svc>({ baseUrl })` types one method per API from the service's descriptors
 * (`import type` the service: no server code is loaded); `createClient({ baseUrl })` works untyped.
 * Either way, the first call reads `/docs.json` once to learn each API's route and descriptors.
 */
export function createClient<S = never>(
  options: ClientOptions,
): [S] extends [never] ? UntypedClient : TypedClient<S>;
// The overload above types it; the typed and untyped clients are one object at run time.
export function createClient(options: ClientOptions): unknown {
  if (!options || typeof options.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) {
    throw new TiffinClientError('createClient: baseUrl must be an http(s) URL', 'usage');
  }
  let apis: Promise<Map<string, ApiInfo>> | undefined;
  const loadApis = (call?: CallOptions): Promise<Map<string, ApiInfo>> => {
    apis ??= (async () => {
      const { response, done } = await send(
        options,
        { method: 'GET', path: '/docs.json', what: 'GET /docs.json' },
        call,
      );
      try {
        return apisFromOpenApi(await response.json());
      } catch (err) {
        if (err instanceof TiffinClientError) throw err;
        throw new TiffinClientError(`GET /docs.json: ${(err as Error).message}`, 'protocol');
      } finally {
        done();
      }
    })();
    // A failed load is not cached: the next call tries again.
    apis.catch(() => {
      apis = undefined;
    });
    return apis;
  };

  const apiNamed = async (name: string, call: CallOptions): Promise<ApiInfo> => {
    const api = (await loadApis(call)).get(name);
    if (!api) {
      const known = [...(await loadApis(call)).keys()].join(', ') || 'none';
      throw new TiffinClientError(`No API named '${name}' (this service has: ${known})`, 'usage');
    }
    return api;
  };

  const methods: ClientMethods = {
    async $call(name, input, call = {}) {
      const api = await apiNamed(name, call);
      const { body, contentType } = await encodeInput(input, api.input);
      const { response, done } = await send(
        options,
        {
          method: 'POST',
          path: api.route,
          body,
          headers: contentType ? { 'content-type': contentType } : {},
          what: `${name} (POST ${api.route})`,
        },
        call,
      );
      return decodeOutput(response, api.output, done);
    },
    $apis: () => loadApis(),
    $task: (name) => taskMethods(options, (call) => apiNamed(name, call)),
  };

  const bound = new Map<string, UntypedApiMethod>();
  return new Proxy(methods, {
    get(target, prop, receiver) {
      if (typeof prop !== 'string' || prop in target) return Reflect.get(target, prop, receiver);
      // Not a thenable: `await client` must give the client back.
      if (prop === 'then') return undefined;
      let method = bound.get(prop);
      if (!method) {
        method = (input, call) => methods.$call(prop, input, call);
        bound.set(prop, method);
      }
      return method;
    },
  }) as UntypedClient;
}
