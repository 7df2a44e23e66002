import { InvalidArgument, TiffinError } from '../errors/index.js';
import type { IODescriptor } from '../io/descriptor.js';
import {
  type ApiAdmission,
  type ApiCacheSettings,
  type ApiFunction,
  type ApiOptions,
  type BatchApiFunction,
  type BatchOptions,
  DEFAULT_TASK_ATTEMPTS,
  type InferenceApi,
  TASK_OPERATIONS,
} from './inference-api.js';

const API_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(['index', 'swagger', 'docs', 'metrics', 'healthz', 'livez', 'readyz']);

/**
 * The API `Service.api` registers, its options checked at registration (not at the first request): its name,
 * route and protocol name free among the service's `apis`, its task and batching settings valid.
 */
export function registeredApi<I extends IODescriptor, O extends IODescriptor>(
  service: string,
  apis: ReadonlyMap<string, InferenceApi>,
  options: ApiOptions<I, O>,
  fn: ApiFunction<I, O> | BatchApiFunction<I, O>,
): InferenceApi {
  const name = options.name ?? fn.name;
  if (!name || !API_NAME.test(name)) {
    throw new InvalidArgument(
      `Invalid API name: '${name}' (use letters, digits and underscores, not starting with a digit; anonymous functions need options.name)`,
    );
  }
  if (RESERVED.has(name))
    throw new InvalidArgument(`Reserved API name: '${name}' is reserved for infra endpoints`);
  if (apis.has(name)) throw new TiffinError(`API ${name} is already defined in Service ${service}`);
  const rawRoute = options.route ?? name;
  if (/[?#]/.test(rawRoute) || rawRoute.startsWith('//') || rawRoute.startsWith(':')) {
    throw new InvalidArgument(`The path ${rawRoute} contains illegal url characters`);
  }
  const route = rawRoute.startsWith('/') ? rawRoute : `/${rawRoute}`;
  if (RESERVED.has(route.slice(1)) || route === '/') {
    throw new InvalidArgument(`Reserved API route: '${rawRoute}' is reserved for infra endpoints`);
  }
  const task = options.task === true || typeof options.task === 'object';
  const attempts =
    (typeof options.task === 'object' ? options.task.attempts : undefined) ?? DEFAULT_TASK_ATTEMPTS;
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new InvalidArgument(`task.attempts must be an integer >= 1, got ${String(attempts)}`);
  const routes = servedRoutes(route, task);
  const protocolName = options.protocolName ?? name;
  if (typeof protocolName !== 'string' || protocolName === '' || protocolName.length > 256) {
    throw new InvalidArgument(`Invalid protocolName for API ${name}: use 1-256 characters`);
  }
  for (const other of apis.values()) {
    const taken = servedRoutes(other.route, other.task).find((r) => routes.includes(r));
    if (taken) throw new InvalidArgument(`API route ${taken} is already used by API ${other.name}`);
    if (other.protocolName === protocolName) {
      throw new InvalidArgument(`Protocol model name '${protocolName}' is already used by API ${other.name}`);
    }
  }
  return {
    name,
    route,
    protocolName,
    input: options.input,
    output: options.output,
    doc: options.doc ?? '',
    example: options.example,
    timeout: options.timeout,
    admission: admissionOf(name, options),
    batching: options.batchable ? batchOptions(name, options) : undefined,
    task,
    taskAttempts: attempts,
    cache: cacheSettings(name, options.cache, options.batchable === true),
    fn: fn as unknown as ApiFunction<IODescriptor, IODescriptor>,
  };
}

/** An API's own queue from its options, checked; undefined when it declares no `concurrency`. */
function admissionOf(api: string, options: ApiOptions<IODescriptor, IODescriptor>): ApiAdmission | undefined {
  const { concurrency, queue, queuePerClient } = options;
  if (concurrency === undefined) {
    if (queue !== undefined || queuePerClient !== undefined)
      throw new InvalidArgument(`API '${api}': queue and queuePerClient need concurrency`);
    return undefined;
  }
  const count = (name: string, value: number | undefined, min: number) => {
    if (value !== undefined && !(Number.isInteger(value) && value >= min))
      throw new InvalidArgument(`API '${api}': ${name} must be an integer >= ${min}, got ${String(value)}`);
  };
  count('concurrency', concurrency, 1);
  count('queue', queue, 0);
  count('queuePerClient', queuePerClient, 1);
  return { concurrency, queue: queue ?? 0, perClient: queuePerClient };
}

/** The paths an API answers on: its route, and with `task` its task routes. */
function servedRoutes(route: string, task: boolean): string[] {
  return task ? [route, ...TASK_OPERATIONS.map((op) => `${route}/${op}`)] : [route];
}

/** Check a batchable API's settings and descriptors at registration (not at the first request). */
function batchOptions(api: string, options: ApiOptions<IODescriptor, IODescriptor>): BatchOptions {
  for (const [side, descriptor] of [
    ['input', options.input],
    ['output', options.output],
  ] as const) {
    if (!descriptor.batching) {
      throw new InvalidArgument(
        `API '${api}' is batchable, but its ${side} descriptor ${descriptor.displayName} cannot batch (it implements no \`batching\` hooks); drop \`batchable\` or use a descriptor that batches (NumpyNdarray, JSON, Text, PandasDataFrame, PandasSeries, Image)`,
      );
    }
  }
  const resolved: BatchOptions = {
    batch_dim: options.batch_dim ?? 0,
    max_batch_size: options.max_batch_size ?? 32,
    max_latency_ms: options.max_latency_ms ?? 100,
  };
  // Only when given: one batch at a time is the default and stays out of the API's description.
  const concurrent = options.maxConcurrentBatches ?? options.max_concurrent_batches;
  if (concurrent !== undefined) resolved.maxConcurrentBatches = concurrent;
  const check = (name: keyof BatchOptions, ok: boolean, rule: string) => {
    if (!ok)
      throw new InvalidArgument(`API '${api}': ${name} must be ${rule}, got ${String(resolved[name])}`);
  };
  check('batch_dim', Number.isInteger(resolved.batch_dim) && resolved.batch_dim >= 0, 'an integer >= 0');
  check(
    'max_batch_size',
    Number.isInteger(resolved.max_batch_size) && resolved.max_batch_size >= 1,
    'an integer >= 1',
  );
  check(
    'maxConcurrentBatches',
    resolved.maxConcurrentBatches === undefined ||
      (Number.isInteger(resolved.maxConcurrentBatches) && resolved.maxConcurrentBatches >= 1),
    'an integer >= 1',
  );
  check(
    'max_latency_ms',
    Number.isFinite(resolved.max_latency_ms) && resolved.max_latency_ms > 0,
    'a number > 0',
  );
  return resolved;
}

/** The API's cache settings from its options (docs/cache.md), checked; undefined without `cache`. */
function cacheSettings(
  name: string,
  given: ApiOptions<IODescriptor, IODescriptor>['cache'],
  batchable: boolean,
): ApiCacheSettings | undefined {
  if (given === undefined || given === false) return undefined;
  if (batchable) throw new InvalidArgument(`API ${name}: cache is not supported with batchable`);
  const options = given === true ? {} : given;
  const ttl = options.ttl ?? 300;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  if (typeof ttl !== 'number' || !(ttl >= 0) || !Number.isFinite(ttl))
    throw new InvalidArgument(`API ${name}: cache.ttl must be a number of seconds >= 0, got ${String(ttl)}`);
  if (!Number.isInteger(maxBytes) || maxBytes < 1)
    throw new InvalidArgument(
      `API ${name}: cache.maxBytes must be a whole number >= 1, got ${String(maxBytes)}`,
    );
  const vary = (options.vary ?? []).map((header) => {
    if (typeof header !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header))
      throw new InvalidArgument(`API ${name}: cache.vary must list header names, got ${String(header)}`);
    return header.toLowerCase();
  });
  const { version } = options;
  if (version !== undefined && typeof version !== 'string' && typeof version !== 'function')
    throw new InvalidArgument(`API ${name}: cache.version must be a string or a function returning one`);
  return { ttlMs: ttl * 1000, maxBytes, when: options.when, vary, version };
}
