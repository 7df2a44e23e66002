import { buildResponse, type Context, type HttpResponse } from '@tiffin/core';

/** Spec 1.3 rule 4: with a context its status, headers and cookies apply; without, 200 and ours only. */
export function respond(body: string | Uint8Array, mediaType: string, ctx: Context | null): HttpResponse {
  if (!ctx) return buildResponse({ body, mediaType });
  return {
    ...buildResponse({
      body,
      mediaType,
      status: ctx.response.status,
      headers: ctx.response.headerList(),
      cookies: ctx.response.cookies,
    }),
  };
}
