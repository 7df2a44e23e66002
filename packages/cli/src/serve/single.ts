import {
  type GrpcServerHandle,
  type ServeOptions,
  type ServerHandle,
  type Service,
  serve,
  serveGrpc,
} from '@tiffin/core';
import { loadService, type ServiceTarget } from '../service-loader.js';
import { type TaskStoreFlags, useTaskStore } from './task-store.js';
import { useTracing } from './tracing.js';

export interface GrpcServeOptions {
  /** Also (or only) serve the APIs over gRPC. */
  enabled: boolean;
  port: number;
  /** Serve HTTP too (default true); false serves gRPC only. */
  http: boolean;
  /** The gRPC server's time limits, in seconds (its defaults when left out). */
  messageTimeout?: number;
  connectionIdle?: number;
  connectionAge?: number;
}

/**
 * Load the service and serve it in this process until SIGTERM/SIGINT (then drain and exit 0): over HTTP, and
 * over gRPC next to it (or instead of it) when asked.
 */
export async function serveInProcess(
  target: ServiceTarget | (() => Promise<Service>),
  options: ServeOptions,
  grpc: GrpcServeOptions = { enabled: false, port: 3001, http: true },
  tasks: TaskStoreFlags = {},
): Promise<void> {
  // A service module, or a service made here (a model served with zero code).
  const service = typeof target === 'function' ? await target() : await loadService(target);
  await useTaskStore(service, tasks);
  await useTracing(service);
  if (!grpc.enabled) {
    await serve(service, { ...options, handleSignals: true });
    return;
  }
  let http: ServerHandle | undefined;
  if (grpc.http) http = await serve(service, { ...options, handleSignals: false });
  const rpc: GrpcServerHandle = await serveGrpc(service, {
    host: options.host,
    port: grpc.port,
    apiToken: options.apiToken,
    inferenceProtocol: options.inferenceProtocol,
    messageTimeout: grpc.messageTimeout,
    connectionIdle: grpc.connectionIdle,
    connectionAge: grpc.connectionAge,
    // The HTTP server already ran the startup hooks; gRPC metrics join its /metrics registry, and calls go
    // through its runtime (one concurrency gate and one batcher per API for both transports).
    runStartupHooks: !http,
    metricsRegistry: http?.app.metrics.registry,
    runtime: http?.app.runtime,
    // And its response cache: v2 ModelInfer answers from it as the HTTP routes do.
    cache: http?.app.cache,
    // Without an HTTP server the gRPC runtime is its own, so the limits go to it.
    limits: http ? undefined : options.limits,
    maxBufferedBytes: http ? undefined : options.maxBufferedBytes,
  });
  process.stdout.write(
    `${JSON.stringify({ time: new Date(), level: 'info', msg: 'gRPC ready', address: rpc.address })}\n`,
  );
  const stop = (signal: NodeJS.Signals) => {
    console.error(JSON.stringify({ time: new Date(), level: 'info', msg: 'shutting down', signal }));
    Promise.all([rpc.close(), http?.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
