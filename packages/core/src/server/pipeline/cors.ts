import { BadInput } from '../../errors/index.js';
import type { CorsOptions } from '../options.js';
import type { PipelineStage } from './request-pipeline.js';

const SAFELISTED_HEADERS = ['Accept', 'Accept-Language', 'Content-Language', 'Content-Type'];

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((v) => v.trim()).filter(Boolean);
}

/** CORS per docs/spec/io-descriptors.md §10.6: preflights answered here, other requests get allow-origin when the origin is allowed. */
export function corsStage(options: CorsOptions): PipelineStage {
  const origins = list(options.access_control_allow_origins);
  const allowAllOrigins = origins.includes('*');
  const originRegex = options.access_control_allow_origin_regex
    ? new RegExp(`^(?:${options.access_control_allow_origin_regex})$`)
    : null;
  const credentials = options.access_control_allow_credentials === true;
  const methods = list(options.access_control_allow_methods);
  const allowMethods = methods.length ? methods.map((m) => m.toUpperCase()) : ['GET'];
  const allowAllMethods = allowMethods.includes('*');
  const configuredHeaders = list(options.access_control_allow_headers);
  const allowAllHeaders = configuredHeaders.includes('*');
  const allowHeaders = [...new Set([...SAFELISTED_HEADERS, ...configuredHeaders])].sort();
  const allowHeadersLower = new Set(allowHeaders.map((h) => h.toLowerCase()));
  const maxAge = String(options.access_control_max_age ?? 600);
  const exposeHeaders = list(options.access_control_expose_headers);

  const originAllowed = (origin: string) =>
    allowAllOrigins || origins.includes(origin) || originRegex?.test(origin) === true;
  // With credentials a literal '*' is not allowed by browsers: echo the origin instead.
  const allowOriginValue = (origin: string) => (allowAllOrigins && !credentials ? '*' : origin);

  return async (ctx, next) => {
    const origin = ctx.get('origin');
    const requestMethod = ctx.get('access-control-request-method');
    if (ctx.method === 'OPTIONS' && origin && requestMethod) {
      const failures: string[] = [];
      ctx.set('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
      ctx.set('access-control-allow-methods', allowMethods.join(', '));
      ctx.set('access-control-max-age', maxAge);
      if (allowAllHeaders) {
        const requested = ctx.get('access-control-request-headers');
        if (requested) ctx.set('access-control-allow-headers', requested);
      } else ctx.set('access-control-allow-headers', allowHeaders.join(', '));
      if (credentials) ctx.set('access-control-allow-credentials', 'true');
      if (originAllowed(origin)) ctx.set('access-control-allow-origin', allowOriginValue(origin));
      else failures.push('origin');
      if (!allowAllMethods && !allowMethods.includes(requestMethod.toUpperCase())) failures.push('method');
      if (!allowAllHeaders) {
        const requested = list(ctx.get('access-control-request-headers').split(','));
        if (requested.some((h) => !allowHeadersLower.has(h.toLowerCase()))) failures.push('headers');
      }
      // docs/spec/io-descriptors.md D4: a refused preflight is a 4xx with the one JSON error body.
      if (failures.length) throw new BadInput(`Disallowed CORS ${failures.join(', ')}`);
      ctx.status = 200;
      ctx.set('content-type', 'text/plain; charset=utf-8');
      ctx.responseBody = 'OK';
      return;
    }
    ctx.vary('Origin');
    if (origin) {
      if (credentials) ctx.set('access-control-allow-credentials', 'true');
      if (exposeHeaders.length) ctx.set('access-control-expose-headers', exposeHeaders.join(', '));
      if (originAllowed(origin)) ctx.set('access-control-allow-origin', allowOriginValue(origin));
    }
    await next();
  };
}
