import type { HttpRequest } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import type { InferenceApi } from '../service/service.js';
import { applyResponseContext } from './response-context.js';
import type { TransportCodec } from './runtime.js';

/**
 * The descriptors' HTTP side as a transport codec: `fromHttpRequest` in, `toHttpResponse` out with the
 * handler's status, headers and cookies applied once. A task's run uses it, so a task's answer is exactly the
 * one `POST /<api>` gives.
 */
export function httpCodec(api: InferenceApi): TransportCodec<HttpRequest, HttpResponse> {
  const descriptors = descriptorHttpCodec(api);
  return {
    decode: descriptors.decode,
    encode: async (output, context) =>
      applyResponseContext(await descriptors.encode(output, context), context),
  };
}

/**
 * The same, the handler's settings left out: for the API route, whose exchange applies them as it takes the
 * answer (`Exchange.answer`), without a merged copy of the descriptor's answer in between.
 */
export function descriptorHttpCodec(api: InferenceApi): TransportCodec<HttpRequest, HttpResponse> {
  return {
    decode: (request) => api.input.fromHttpRequest(request),
    encode: (output, context) => api.output.toHttpResponse(output as never, context),
  };
}
