import type Koa from 'koa';
import { ServiceUnavailable } from '../errors/index.js';
import type { Limits } from '../limits/limits.js';
import type { Exchange } from '../server/exchange.js';
import { adaptRequest } from '../server/request-adapter.js';
import { invokeApi } from '../server/routes/api.js';
import type { RouteTable } from '../server/routes/route-table.js';
import type { RequestState } from '../server/state.js';
import { Context } from '../service/context.js';
import type { Service } from '../service/service.js';
import { HEADER_LENGTH, parseInferRequest, writeInferResponse } from './infer-body.js';
import { type ModelAdapter, modelAdapterFor } from './models.js';

/** The extensions `GET /v2` announces. */
const EXTENSIONS = ['binary_tensor_data'];

export interface InferenceProtocolDeps {
  service: Service;
  maxBodySize: number;
  limits: Readonly<Limits>;
  isReady: () => boolean;
}

type KoaContext = Koa.ParameterizedContext<RequestState>;

function json(ctx: KoaContext, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(body);
}

/** `POST /v2/models/{api}/infer`: tensors in, the API called as on its own route, tensors out. */
function inferHandler(model: ModelAdapter, deps: InferenceProtocolDeps): (ctx: Exchange) => Promise<void> {
  return async (ctx) => {
    if (!deps.isReady()) throw new ServiceUnavailable('The service is starting; try again shortly');
    const request = adaptRequest(ctx.req, ctx.url, {
      maxBodySize: deps.maxBodySize,
      abort: ctx.state.abort,
      limits: deps.limits,
    });
    const infer = parseInferRequest(
      await request.body(),
      ctx.get(HEADER_LENGTH) || undefined,
      deps.limits.maxDepth,
    );
    const context = new Context(request, deps.service.state, ctx.state.requestId);
    ctx.state.onClose.push(() => {
      if (context.usedTempDir) context.dispose().catch(() => {});
    });
    const input = await model.toInput(infer.inputs, context);
    const result = await invokeApi(model.api, input, context);
    const outputs = await model.fromOutput(result, context);
    const { body, headers } = writeInferResponse(model.api.name, infer, outputs);
    if (ctx.state.timedOut) return;
    ctx.status = 200;
    for (const [name, value] of headers) ctx.set(name, value);
    ctx.body = body;
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
  add('/v2', {
    GET: (ctx) =>
      json(ctx, 200, { name: service.name, version: service.version ?? '0.0.0', extensions: EXTENSIONS }),
  });
  const infer = new Map<string, (ctx: Exchange) => Promise<void>>();
  for (const api of service.apis.values()) {
    const model = modelAdapterFor(api);
    if (!model) continue;
    const base = `/v2/models/${api.name}`;
    add(base, {
      GET: (ctx) =>
        json(ctx, 200, {
          name: api.name,
          versions: [],
          platform: 'tiffin',
          inputs: model.inputs,
          outputs: model.outputs,
        }),
    });
    add(`${base}/ready`, {
      GET: (ctx) => json(ctx, isReady() ? 200 : 503, { name: api.name, ready: isReady() }),
    });
    const handler = inferHandler(model, deps);
    if (!routes.match(`${base}/infer`)) {
      routes.add(`${base}/infer`, { POST: handler }, api);
      infer.set(`${base}/infer`, handler);
    }
  }
  return infer;
}
