import type { MountedMiddleware } from '../service/service.js';

/** One route a mounted router declares, as the API page lists it. */
export interface MountedRoute {
  /** OpenAPI form of the pattern: `/users/:id` → `/users/{id}`. */
  path: string;
  /** Lower-case methods (HEAD left out where GET answers it). */
  methods: string[];
  params: string[];
  public: boolean;
}

/** What `@koa/router`'s `routes()` middleware carries: its router, whose `stack` holds one layer per route. */
interface RouterLike {
  stack: ReadonlyArray<{ path?: unknown; methods?: unknown }>;
}

/** A pattern OpenAPI can state: literal segments and `:name` parameters (no optional parts, no wildcards). */
const DESCRIBABLE = /^(?:\/(?:[A-Za-z0-9._~-]+|:[A-Za-z_][A-Za-z0-9_]*))*\/?$/;

/**
 * The routes of the mounted routers (middleware from `router.routes()`), found by their shape, not by
 * importing `@koa/router` (the user's dependency, not core's). Other middleware, and patterns OpenAPI cannot
 * state (regular expressions, optional parts, wildcards), are not listed.
 */
export function mountedRouterRoutes(mounts: readonly MountedMiddleware[]): MountedRoute[] {
  const routes: MountedRoute[] = [];
  for (const mount of mounts) {
    const router = (mount.middleware as { router?: Partial<RouterLike> }).router;
    if (!router || !Array.isArray(router.stack)) continue;
    for (const layer of router.stack) {
      const { path, methods } = layer;
      if (typeof path !== 'string' || !DESCRIBABLE.test(path) || !Array.isArray(methods)) continue;
      const names = methods.filter((m): m is string => typeof m === 'string').map((m) => m.toLowerCase());
      const listed = names.filter((m) => m !== 'head' || !names.includes('get'));
      if (listed.length === 0) continue;
      const params = [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
      routes.push({
        path: path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}') || '/',
        methods: listed,
        params,
        public: mount.public,
      });
    }
  }
  return routes;
}
