import { MethodNotAllowed, NotFound, truncateForMessage } from '../../errors/index.js';
import type { InferenceApi } from '../../service/service.js';
import type { Exchange } from '../exchange.js';

export type RouteHandler = (ctx: Exchange) => Promise<void> | void;

export interface Route {
  readonly path: string;
  /** Set for API routes. */
  readonly api: InferenceApi | undefined;
  readonly handlers: ReadonlyMap<string, RouteHandler>;
}

/**
 * Exact-path routing with the answers of docs/spec/io-descriptors.md §10.1: unknown path → 404, known path with another method →
 * 405 with `allow`, a trailing slash on a known path → 307 to the path without it. GET routes answer HEAD.
 */
/** Routes of one path segment's every value (`/v2/repository/models/{name}/load`): handlers made for the segment. */
interface Template {
  readonly prefix: string;
  readonly suffix: string;
  readonly route: Route;
  readonly handlersFor: (segment: string) => Record<string, RouteHandler>;
}

export class RouteTable {
  private readonly routes = new Map<string, Route>();
  private readonly templates: Template[] = [];

  add(path: string, methods: Record<string, RouteHandler>, api?: InferenceApi): void {
    const handlers = new Map<string, RouteHandler>();
    for (const [method, handler] of Object.entries(methods)) handlers.set(method.toUpperCase(), handler);
    if (handlers.has('GET') && !handlers.has('HEAD')) handlers.set('HEAD', handlers.get('GET')!);
    this.routes.set(path, { path, api, handlers });
  }

  /**
   * Serve `prefix + segment + suffix` for every segment (one URL-decoded path segment) no exact route has, with
   * `handlersFor(segment)`; its endpoint (metrics, logs) is the template's path, so series stay bounded.
   */
  addTemplate(
    prefix: string,
    suffix: string,
    methods: readonly string[],
    handlersFor: (segment: string) => Record<string, RouteHandler>,
  ): void {
    const handlers = new Map(methods.map((m) => [m.toUpperCase(), (() => undefined) as RouteHandler]));
    const route = { path: `${prefix}{name}${suffix}`, api: undefined, handlers };
    this.templates.push({ prefix, suffix, route, handlersFor });
  }

  match(path: string): Route | undefined {
    return this.routes.get(path) ?? this.templated(path)?.template.route;
  }

  private templated(path: string): { template: Template; segment: string } | undefined {
    for (const template of this.templates) {
      const { prefix, suffix } = template;
      if (path.length <= prefix.length + suffix.length || !path.startsWith(prefix) || !path.endsWith(suffix))
        continue;
      const raw = path.slice(prefix.length, path.length - suffix.length);
      if (raw.includes('/')) continue;
      try {
        return { template, segment: decodeURIComponent(raw) };
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /**
   * Answer a request from the table (404, 405 and 307 included): undefined when the handler answered at once,
   * else the handler's own promise as is (no promise of the table's own). A handler that throws at once throws
   * here.
   */
  dispatch(ctx: Exchange): Promise<void> | undefined {
    const route = this.routes.get(ctx.path);
    if (!route) return this.dispatchTemplated(ctx);
    const handler = route.handlers.get(ctx.method);
    if (!handler) return this.methodNotAllowed(ctx, route);
    const result = handler(ctx);
    return result instanceof Promise ? result : undefined;
  }

  private dispatchTemplated(ctx: Exchange): Promise<void> | undefined {
    const found = this.templated(ctx.path);
    if (!found) return this.unrouted(ctx);
    if (!found.template.route.handlers.has(ctx.method))
      return this.methodNotAllowed(ctx, found.template.route);
    const handler = found.template.handlersFor(found.segment)[ctx.method];
    if (!handler) return this.methodNotAllowed(ctx, found.template.route);
    const result = handler(ctx);
    return result instanceof Promise ? result : undefined;
  }

  private async unrouted(ctx: Exchange): Promise<void> {
    const trimmed = ctx.path.length > 1 && ctx.path.endsWith('/') ? ctx.path.replace(/\/+$/, '') : null;
    if (trimmed && this.routes.has(trimmed)) {
      ctx.status = 307;
      // Relative (RFC 9110 §10.2.2 allows it): a location built from the Host header would send a client
      // wherever a hostile Host (or a proxy passing one on) names.
      ctx.set('location', `${trimmed}${ctx.search}`);
      ctx.responseBody = '';
      return;
    }
    throw new NotFound(`Not Found: no route for ${ctx.method} ${truncateForMessage(ctx.path)}`);
  }

  private async methodNotAllowed(ctx: Exchange, route: Route): Promise<void> {
    const allow = [...route.handlers.keys()];
    // Order as the spec shows it: HEAD before GET.
    allow.sort((a, b) => (a === 'HEAD' ? -1 : b === 'HEAD' ? 1 : 0));
    ctx.set('allow', allow.join(', '));
    throw new MethodNotAllowed(
      `Method Not Allowed: ${ctx.method} ${truncateForMessage(ctx.path)} accepts ${allow.join(', ')}`,
    );
  }
}
