import type { Context } from '../context/context.js';
import { type HttpResponse, serializeCookie } from '../http/response.js';

/**
 * The handler's response settings (`ctx.response`: status, headers, cookies; docs/spec/io-descriptors.md §1.3
 * rule 4) applied to the descriptor's answer, once, for every descriptor: the handler's headers first and
 * winning over the descriptor's of the same name, then the descriptor's others, then the handler's cookies.
 * A status the handler did not change leaves the descriptor's.
 */
export function applyResponseContext(response: HttpResponse, ctx: Context): HttpResponse {
  const settings = ctx.responseIfUsed;
  if (settings === undefined) return response;
  const own = settings.headerList();
  // The common case (nothing set) costs one check.
  if (settings.status === 200 && own.length === 0 && settings.cookies.length === 0) return response;
  const headers = own.map(([name, value]): [string, string] => [name.toLowerCase(), value]);
  const named = new Set(headers.map(([name]) => name));
  const cookies = settings.cookies.map(serializeCookie);
  for (const header of response.headers) {
    const [name, value] = header;
    // A descriptor that still copies ctx.response itself must not send the handler's cookies twice.
    if (name === 'set-cookie' ? cookies.includes(value) : named.has(name)) continue;
    headers.push(header);
  }
  for (const cookie of cookies) headers.push(['set-cookie', cookie]);
  return {
    status: settings.status === 200 ? response.status : settings.status,
    headers,
    body: response.body,
  };
}
