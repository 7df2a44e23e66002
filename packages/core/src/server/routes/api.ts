import { PayloadTooLarge, ServiceUnavailable } from '../../errors/index.js';
import type { Limits } from '../../limits/limits.js';
import { Context } from '../../service/context.js';
import type { InferenceApi, Service } from '../../service/service.js';
import type { Exchange } from '../exchange.js';
import { adaptRequest } from '../request-adapter.js';
import { writeResponse } from '../write-response.js';

export interface ApiRouteDeps {
  service: Service;
  maxBodySize: number;
  limits: Readonly<Limits>;
  isReady: () => boolean;
}

/**
 * Calls an API with its decoded input: the one place every transport (the native route, the Open Inference
 * Protocol) hands a value to an API function.
 */
export function invokeApi(api: InferenceApi, input: unknown, context: Context): Promise<unknown> {
  return Promise.resolve(api.fn(input as never, context));
}

/**
 * The request pipeline of spec 10.3 with D11: request → input descriptor → API function (with ctx) →
 * output descriptor (with ctx) → the wire. Errors propagate to the error handler.
 */
export function apiHandler(api: InferenceApi, deps: ApiRouteDeps): (ctx: Exchange) => Promise<void> {
  return async (ctx: Exchange): Promise<void> => {
    if (!deps.isReady()) throw new ServiceUnavailable('The service is starting; try again shortly');
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > deps.maxBodySize) {
      throw new PayloadTooLarge(`Request body exceeds the limit of ${deps.maxBodySize} bytes`);
    }
    const request = adaptRequest(ctx.req, ctx.url, {
      maxBodySize: deps.maxBodySize,
      abort: ctx.state.abort,
      limits: deps.limits,
    });
    const context = new Context(request, deps.service.state, ctx.state.requestId);
    // The temp dir lives until the response (possibly streamed) is over.
    ctx.state.onClose.push(() => {
      if (context.usedTempDir) context.dispose().catch(() => {});
    });
    const input = await api.input.fromHttpRequest(request);
    const result = await invokeApi(api, input, context);
    const response = await api.output.toHttpResponse(result as never, context);
    if (ctx.state.timedOut) return;
    writeResponse(ctx, response);
  };
}
