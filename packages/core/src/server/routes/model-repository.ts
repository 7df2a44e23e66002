import type { ModelAdapter } from '../../inference-protocol/models.js';
import {
  controlledModel,
  indexOf,
  readControlRequest,
  readIndexRequest,
} from '../../inference-protocol/repository-requests.js';
import type { Service } from '../../service/service.js';
import type { Exchange } from '../exchange.js';
import type { RouteHandler } from './route-table.js';

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
      json(ctx, 200, indexOf(control, models.keys(), isReady(), readyOnly));
    },
  });
  const names = control ? control.index(false).map((m) => m.name) : [...models.keys()];
  for (const name of names) {
    const base = `/v2/repository/models/${encodeURIComponent(name)}`;
    add(`${base}/load`, {
      POST: async (ctx) => {
        readControlRequest(await ctx.body(), maxDepth);
        await controlledModel(control, name).load(name);
        ctx.status = 200;
        ctx.responseBody = '';
      },
    });
    add(`${base}/unload`, {
      POST: async (ctx) => {
        const options = readControlRequest(await ctx.body(), maxDepth);
        await controlledModel(control, name).unload(name, options);
        ctx.status = 200;
        ctx.responseBody = '';
      },
    });
  }
}
