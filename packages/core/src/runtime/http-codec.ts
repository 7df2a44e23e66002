import type { HttpRequest } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import type { InferenceApi } from '../service/service.js';
import { applyResponseContext } from './response-context.js';
import type { TransportCodec } from './runtime.js';

/**
 * The descriptors' HTTP side as a transport codec: `fromHttpRequest` in, `toHttpResponse` out with the
 * handler's status, headers and cookies applied once. The API route and a task's run share it, so a task's
 * answer is exactly the one `POST /<api>` gives.
 */
export function httpCodec(api: InferenceApi): TransportCodec<HttpRequest, HttpResponse> {
  return {
    decode: (request) => api.input.fromHttpRequest(request),
    encode: async (output, context) =>
      applyResponseContext(await api.output.toHttpResponse(output as never, context), context),
  };
}
