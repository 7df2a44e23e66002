import { CACHE_HEADER, noCache, type ResponseCacheDeps } from '../../cache/api-cache.js';
import { ProtocolAnswerCache } from '../../cache/protocol-cache.js';
import type { CachedAnswer } from '../../cache/response-cache.js';
import { HEADER_LENGTH, writeInferResponse } from '../../inference-protocol/infer-body.js';
import {
  type ModelAdapter,
  modelAdapterFor,
  modelList,
  modelMetadata,
  protocolModels,
  serverMetadata,
} from '../../inference-protocol/models.js';
import { protocolModelReady } from '../../inference-protocol/repository-requests.js';
import { readInferRequest } from '../../io/infer-request-body.js';
import type { Limits } from '../../limits/limits.js';
import { applyCallOptions, httpCallOptions, v2CallOptions } from '../../runtime/admission/call-options.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { Service } from '../../service/service.js';
import type { InferRequest } from '../../wire/v2/infer-request.js';
import type { Exchange } from '../exchange.js';
import { registerModelRepository } from './model-repository.js';
import type { RouteTable } from './route-table.js';

/** The extensions `GET /v2` announces. */
const EXTENSIONS = ['binary_tensor_data'];

export interface InferenceProtocolDeps {
  service: Service;
  /** The invocation core: the infer route calls APIs through it (gate, deadline, batching) like the native route. */
  runtime: Runtime;
  limits: Readonly<Limits>;
  isReady: () => boolean;
  /** The service's response cache (APIs with `cache`), or undefined. */
  cache?: ResponseCacheDeps | undefined;
}

/**
 * What a v2 request's answer depends on: its id (echoed), tensors, requested outputs and parameters, less those
 * that only say how the call waits (`priority`, `timeout`), and the API's `cache.vary` headers.
 */
function cacheableRequest(infer: InferRequest, ctx: Exchange, api: ModelAdapter['api']): unknown {
  const { priority: _p, timeout: _t, ...parameters } = infer.parameters;
  const vary = api.cache?.vary ?? [];
  return [infer.id, parameters, infer.inputs, infer.outputs, vary.map((name) => ctx.get(name))];
}

function json(ctx: Exchange, status: number, body: unknown): void {
  ctx.status = status;
  ctx.set('content-type', 'application/json; charset=utf-8');
  ctx.responseBody = JSON.stringify(body);
}

/** `POST /v2/models/{api}/infer`: tensors in, the API called through the runtime as on its own route, tensors out. */
function inferHandler(model: ModelAdapter, deps: InferenceProtocolDeps): (ctx: Exchange) => Promise<void> {
  const cached = deps.cache && model.api.cache ? new ProtocolAnswerCache(deps.cache, 'v2-http') : undefined;
  return async (ctx) => {
    const infer = await readInferRequest(
      await ctx.body(),
      ctx.get(HEADER_LENGTH) || undefined,
      deps.limits.maxDepth,
      ctx.request.signal,
    );
    // As on the API's own route: the permit once the body is in, the client's urgency and deadline first.
    applyCallOptions(ctx, httpCallOptions(ctx.req));
    v2CallOptions(ctx, infer.parameters);
    deps.runtime.rewatch(ctx);
    await deps.runtime.admitCall(ctx);
    const compute = async (): Promise<CachedAnswer> => {
      const outputs = await deps.runtime.invoke(model.api, ctx, infer, model.codec);
      const { body, headers } = writeInferResponse(model.name, infer, outputs);
      return { status: 200, headers, body };
    };
    // An API with `cache` answers a repeated request from it (docs/cache.md, other protocols).
    const { answer, cache } = cached
      ? await cached.answer(model.api, cacheableRequest(infer, ctx, model.api), noCache(ctx), compute)
      : { answer: await compute(), cache: undefined };
    if (ctx.timedOut) return;
    ctx.status = answer.status;
    for (const [name, value] of answer.headers) ctx.set(name, value);
    if (cache) ctx.set(CACHE_HEADER, cache);
    ctx.responseBody = answer.body;
  };
}

/**
 * The Open Inference Protocol (KServe v2) beside the native routes: health, server and model metadata,
 * model readiness and `infer` for every API whose descriptors have a tensor form. Paths an API already uses
 * stay the API's. Returns the infer handlers by path, for the server's direct (Koa-less) POST path.
 */
export function registerInferenceProtocol(
  routes: RouteTable,
  deps: InferenceProtocolDeps,
): Map<string, (ctx: Exchange) => Promise<void>> {
  const { service, isReady } = deps;
  const add = (path: string, handlers: Parameters<RouteTable['add']>[1], api?: ModelAdapter['api']) => {
    if (!routes.match(path)) routes.add(path, handlers, api);
  };
  add('/v2/health/live', { GET: (ctx) => json(ctx, 200, { live: true }) });
  add('/v2/health/ready', { GET: (ctx) => json(ctx, isReady() ? 200 : 503, { ready: isReady() }) });
  add('/v2', { GET: (ctx) => json(ctx, 200, serverMetadata(service, EXTENSIONS)) });
  const infer = new Map<string, (ctx: Exchange) => Promise<void>>();
  const models = protocolModels(service);
  add('/v2/models', { GET: (ctx) => json(ctx, 200, modelList(models)) });
  registerModelRepository(routes, add, service, models, isReady, deps.limits.maxDepth);
  const serveModel = (name: string, model: ModelAdapter): void => {
    // A model name that is not a path segment as it stands (a space, '/', non-ASCII) is served URL-encoded.
    const base = `/v2/models/${encodeURIComponent(name)}`;
    add(base, { GET: (ctx) => json(ctx, 200, modelMetadata(model)) });
    add(`${base}/ready`, {
      GET: (ctx) => {
        const ready = protocolModelReady(service, name, isReady());
        json(ctx, ready ? 200 : 503, { name, ready });
      },
    });
    const handler = inferHandler(model, deps);
    if (!routes.match(`${base}/infer`)) {
      routes.add(`${base}/infer`, { POST: handler }, model.api);
      infer.set(`${base}/infer`, handler);
    }
  };
  for (const [name, model] of models) serveModel(name, model);
  // An API added while serving (a repository's new model) is a protocol model from then on.
  service.watchApis((api) => {
    const model = modelAdapterFor(api);
    if (!model || models.has(model.name)) return;
    models.set(model.name, model);
    serveModel(model.name, model);
  });
  return infer;
}
