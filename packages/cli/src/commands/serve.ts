import { resolveServeArgument } from '@tiffin/build';
import { modelService, type ServeOptions } from '@tiffin/core';
import { type Command, Option } from 'commander';
import { reportError } from '../errors.js';
import { parseNonNegativeInt, parsePort, parsePositiveInt, parseSeconds } from '../options.js';
import { cacheOption, responseCacheFrom } from '../serve/cache-option.js';
import { loadOptions, type ModelFlags, modelOptions, serviceOptions } from '../serve/model-flags.js';
import { resolveModelTarget } from '../serve/model-target.js';
import { serveWithReload } from '../serve/reload.js';
import {
  isRepositoryTarget,
  isStoreRepositoryTarget,
  type RepositoryFlags,
  repositoryOptions,
  repositoryService,
  storeRepositoryService,
} from '../serve/repository/repository-flags.js';
import { serveInProcess } from '../serve/single.js';
import { type TaskOptionFlags, taskOptions, taskStoreFlags, webhookOptions } from '../serve/task-options.js';
import { serveWithWorkers } from '../serve/workers.js';
import { loadService, parseServiceTarget } from '../service-loader.js';

interface ServeFlags extends ModelFlags, TaskOptionFlags, RepositoryFlags {
  port: number;
  host: string;
  cache?: string;
  readyMaxQueue?: number;
  reload?: boolean;
  workers: number;
  timeout?: number;
  maxConcurrency?: number;
  maxBodySize?: number;
  maxBufferedBytes?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
  sendTimeout?: number;
  minSendRate?: number;
  maxStreams?: number;
  streamIdleTimeout?: number;
  streamLifetime?: number;
  cors?: string[];
  metrics: boolean;
  grpc?: boolean;
  grpcPort: number;
  grpcMessageTimeout?: number;
  grpcConnectionIdle?: number;
  grpcConnectionAge?: number;
  http: boolean;
  apiToken?: string;
  metricsAuth?: boolean;
}

/** `tiffin serve <service.ts[:export]>` */
export function registerServe(program: Command): void {
  const command = program
    .command('serve')
    .description('Serve a service over HTTP (TypeScript files run without a build step)')
    .argument(
      '<service...>',
      'service module, e.g. service.ts or service.ts:myService (default export, else `svc`), a built package tag (name[:version]), or a model to serve with zero code: model.onnx, a TF.js model.json folder, a folder of models (a model repository, docs/model-repository.md), or a store tag with its module (onnx:iris:latest); several store tags (onnx:a onnx:b) are served as a repository',
    )
    .addOption(
      new Option('-p, --port <port>', 'port to listen on (0 picks a free one)')
        .env('PORT')
        .argParser(parsePort)
        .default(3000),
    )
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--reload', 'restart when a file in the service folder changes (development)')
    .option('--workers <n>', 'number of server processes sharing the port', parsePositiveInt, 1)
    .option('--timeout <seconds>', 'per-request timeout before 504 (default 60)', parseSeconds)
    .option('--max-concurrency <n>', 'requests handled at once before 503 (default 128)', parsePositiveInt)
    .option(
      '--ready-max-queue <n>',
      '/readyz fails while more tasks than this wait to start, so a load balancer sends work elsewhere',
      parseNonNegativeInt,
    )
    .option('--max-body-size <bytes>', 'largest request body before 413 (default 32 MiB)', parsePositiveInt)
    .option(
      '--max-buffered-bytes <bytes>',
      'request-body bytes held across all requests (gRPC messages too) before 503 BODY_BUDGET_FULL (default 256 MiB)',
      parsePositiveInt,
    )
    .option(
      '--headers-timeout <seconds>',
      'seconds to send the request headers before 408 (default 10)',
      parseSeconds,
    )
    .option(
      '--body-timeout <seconds>',
      'seconds a request body may stall between chunks before 408 (default 10)',
      parseSeconds,
    )
    .option(
      '--send-timeout <seconds>',
      'seconds a client may go without reading an answer before its connection is closed (default 30)',
      parseSeconds,
    )
    .option(
      '--min-send-rate <bytes>',
      'bytes a second a client must read of a pending answer (default 1024)',
      parsePositiveInt,
    )
    .option('--max-streams <n>', 'event streams open at once before 503 (default 64)', parsePositiveInt)
    .option(
      '--stream-idle-timeout <seconds>',
      'seconds an event stream may go without an event before it is ended (default 300)',
      parseSeconds,
    )
    .option(
      '--stream-lifetime <seconds>',
      'seconds an event stream may stay open in all (default 3600)',
      parseSeconds,
    )
    .option('--cors <origin...>', 'enable CORS for these origins (`*` for any)')
    .option('--no-metrics', 'disable /metrics')
    .option('--grpc', 'also serve the APIs over gRPC (bentoml.grpc.v1 protocol)')
    .option('--grpc-port <port>', 'gRPC port (with --grpc)', parsePort, 3001)
    .option(
      '--grpc-message-timeout <seconds>',
      "seconds a gRPC call's request message may take to arrive before DEADLINE_EXCEEDED (default 60)",
      parseSeconds,
    )
    .option(
      '--grpc-connection-idle <seconds>',
      'seconds a gRPC connection may stay without a call before it is closed (default 300)',
      parseSeconds,
    )
    .option(
      '--grpc-connection-age <seconds>',
      'seconds a gRPC connection may stay open in all; its calls then get 30 s to finish (default 3600)',
      parseSeconds,
    )
    .option('--no-http', 'with --grpc: serve gRPC only')
    .option(
      '--api-token <token>',
      'require `Authorization: Bearer <token>` on API calls, / and /docs.json (and gRPC calls); default $TIFFIN_API_TOKEN',
    )
    .option('--metrics-auth', 'with a token: require it for /metrics too');
  repositoryOptions(modelOptions(taskOptions(cacheOption(command)))).action(
    async (specs: string[], flags: ServeFlags) => {
      try {
        if (!flags.http && !flags.grpc) throw new Error('--no-http needs --grpc (nothing would be served)');
        const fromStore = isStoreRepositoryTarget(specs, flags);
        if (specs.length > 1 && !fromStore)
          throw new Error(
            `tiffin serve takes one service, model or folder; several arguments must all be store tags with their module (onnx:a onnx:b), got ${specs.join(' ')}`,
          );
        const spec = specs[0] as string;
        const repository = !fromStore && (await isRepositoryTarget(spec, flags));
        const model = repository ? null : await resolveModelTarget(spec);
        // A package tag (`name[:version]`) serves that built package's entry module.
        const options: ServeOptions = {
          port: flags.port,
          host: flags.host,
          timeout: flags.timeout,
          maxConcurrency: flags.maxConcurrency,
          readyMaxQueue: flags.readyMaxQueue,
          maxBodySize: flags.maxBodySize,
          maxBufferedBytes: flags.maxBufferedBytes,
          headersTimeout: flags.headersTimeout,
          bodyTimeout: flags.bodyTimeout,
          sendTimeout: flags.sendTimeout,
          minSendRate: flags.minSendRate,
          maxStreams: flags.maxStreams,
          streamIdleTimeout: flags.streamIdleTimeout,
          streamLifetime: flags.streamLifetime,
          metrics: flags.metrics,
          apiToken: flags.apiToken,
          metricsAuth: flags.metricsAuth,
          webhooks: webhookOptions(flags),
          cache: await responseCacheFrom(flags.cache),
          cors: flags.cors
            ? {
                enabled: true,
                access_control_allow_origins: flags.cors,
                access_control_allow_methods: ['GET', 'POST', 'OPTIONS'],
              }
            : undefined,
        };
        const grpc = {
          enabled: flags.grpc === true,
          port: flags.grpcPort,
          http: flags.http,
          messageTimeout: flags.grpcMessageTimeout,
          connectionIdle: flags.grpcConnectionIdle,
          connectionAge: flags.grpcConnectionAge,
        };
        const tasks = taskStoreFlags(flags);
        if (repository || fromStore) {
          if (flags.reload || flags.workers > 1)
            throw new Error(
              '--reload and --workers serve service files; a repository reloads with --model-control poll',
            );
          const service = fromStore ? storeRepositoryService(specs, flags) : repositoryService(spec, flags);
          await serveInProcess(service, options, grpc);
          return;
        }
        if (model) {
          if (flags.reload || flags.workers > 1)
            throw new Error('--reload and --workers serve service files; a model scales with --instances');
          const load = async () => {
            const loaded = await model.framework.loadModel(model.source, loadOptions(flags));
            try {
              return modelService(loaded, serviceOptions(flags));
            } catch (err) {
              // A flag the model refuses (an unknown --outputs name): its runner threads must not keep the process.
              await loaded.close();
              throw err;
            }
          };
          await serveInProcess(load, options, grpc);
          return;
        }
        const target = parseServiceTarget(await resolveServeArgument(spec));
        if (flags.reload) {
          // Validate once up front so a typo is a one-line error, not a restart loop.
          await loadService(target);
          const childArgs = process.argv.slice(1).filter((arg) => arg !== '--reload');
          serveWithReload(target.file, childArgs);
        } else if (flags.workers > 1) {
          await serveWithWorkers(target, options, flags.workers, tasks);
        } else {
          await serveInProcess(target, options, grpc, tasks);
        }
      } catch (err) {
        reportError(err);
      }
    },
  );
}
