import type { ModelAdapter } from '../../inference-protocol/models.js';
import {
  controlledModel,
  indexOf,
  readControlRequest,
  readIndexRequest,
} from '../../inference-protocol/repository-requests.js';
import type { Service } from '../../service/service.js';
import type { Exchange } from '../exchange.js';
import type { RouteHandler, RouteTable } from './route-table.js';

function json(ctx: Exchange, status: number, body: unknown): void {
  ctx.status = status;
  ctx.set('content-type', 'application/json; charset=utf-8');
  ctx.responseBody = JSON.stringify(body);
}

/**
 * The repository extension over HTTP (docs/model-repository.md): `POST /v2/repository/index`, and
 * `POST /v2/repository/models/<name>/load|unload` for every model of the service's repository (answered 200 with
 * an empty body, as Triton answers them); `GET /v2/models/<name>/ready` asks the repository whether that model
 * answers. Authorised as every API route is (they are not probes).
 */
export function registerModelRepository(
  routes: RouteTable,
  add: (path: string, handlers: Record<string, RouteHandler>) => void,
  service: Service,
  models: ReadonlyMap<string, ModelAdapter>,
  isReady: () => boolean,
  maxDepth: number,
): void {
  const control = service.modelRepository;
  add('/v2/repository/index', {
    POST: async (ctx) => {
      const readyOnly = readIndexRequest(await ctx.body(), maxDepth);
      json(ctx, 200, await indexOf(control, models.keys(), isReady(), readyOnly));
    },
  });
  const routesFor = (name: string): Record<string, Record<string, RouteHandler>> => ({
    load: {
      POST: async (ctx) => {
        readControlRequest(await ctx.body(), maxDepth);
        await controlledModel(control, name).load(name);
        ctx.status = 200;
        ctx.responseBody = '';
      },
    },
    unload: {
      POST: async (ctx) => {
        const options = readControlRequest(await ctx.body(), maxDepth);
        await controlledModel(control, name).unload(name, options);
        ctx.status = 200;
        ctx.responseBody = '';
      },
    },
  });
  if (control) {
    // Any name: a model copied into the folder while serving is loaded by name, as Triton loads one; an
    // unknown name is the repository's 404.
    for (const operation of ['load', 'unload'] as const)
      routes.addTemplate(
        '/v2/repository/models/',
        `/${operation}`,
        ['POST'],
        (name) => routesFor(name)[operation]!,
      );
    return;
  }
  for (const name of models.keys()) {
    const base = `/v2/repository/models/${encodeURIComponent(name)}`;
    const own = routesFor(name);
    add(`${base}/load`, own.load!);
    add(`${base}/unload`, own.unload!);
  }
}
