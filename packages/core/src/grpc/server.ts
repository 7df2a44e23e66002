import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { Registry } from 'prom-client';
import {
  ConfigError,
  clientMessage,
  GrpcStatus,
  type GrpcStatusCode,
  InvalidArgument,
  isTiffinError,
  NotFound,
  truncateForMessage,
} from '../errors/index.js';
import { BufferedHttpRequest } from '../http/request.js';
import type { IODescriptor } from '../io/descriptor.js';
import { type LimitOptions, type Limits, resolveLimits } from '../limits/limits.js';
import type { Invocation } from '../runtime/invocation.js';
import { LazyAbort } from '../runtime/lazy-abort.js';
import { Runtime, type TransportCodec } from '../runtime/runtime.js';
import { type AuthCheck, bearerAuth, resolveApiToken } from '../server/auth.js';
import type { Logger } from '../server/logger.js';
import { DEFAULT_SERVER_OPTIONS } from '../server/options.js';
import { newRequestId } from '../server/request-id.js';
import type { InferenceApi, Service } from '../service/service.js';
import type { ProtoField, ProtoPayload, RequestMessage, ResponseMessage } from './messages.js';
import { grpcMetrics } from './metrics.js';
import { GRPC_SERVICE_NAME, inferenceServiceDefinition, loadProtocol } from './proto.js';
import { serviceMetadata } from './service-metadata.js';

export interface GrpcServerOptions {
  host?: string;
  /** 0 picks a free port. Default 3001. */
  port?: number;
  /** Largest request message in bytes (default 64 MiB). */
  maxReceiveMessageLength?: number;
  /** Largest response message in bytes (default 64 MiB). */
  maxSendMessageLength?: number;
  /** Registry for the gRPC metrics (default: prom-client's global one, which `/metrics` exposes). */
  metricsRegistry?: Registry;
  /** Serve grpc.reflection.v1(alpha) (default true). */
  reflection?: boolean;
  /** Log function for unexpected errors (default console.error as a JSON line). */
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Bearer token every call must carry in its `authorization` metadata (`Bearer <token>`); missing or wrong →
   * UNAUTHENTICATED. Default `$TIFFIN_API_TOKEN`; unset or empty → no auth. The health service stays open.
   */
  apiToken?: string;
  /** Run the service's startup hooks before serving (default true; false when the HTTP server already did). */
  runStartupHooks?: boolean;
  /**
   * The invocation core to call APIs through: pass the HTTP app's (`handle.app.runtime`) so both transports
   * share one concurrency gate and one batcher per API. Default: a runtime of its own with the HTTP server's
   * default limits (timeout 60 s, 128 calls at once).
   */
  runtime?: Runtime;
  /**
   * Input bounds (nesting depth, multipart parts and names), as `serve({ limits })`; see docs/security.md.
   * With `runtime` given, that runtime's limits apply and this must be left out.
   */
  limits?: LimitOptions;
}

export interface GrpcServerHandle {
  readonly server: grpc.Server;
  readonly port: number;
  /** `host:port` a client can dial. */
  readonly address: string;
  /** Mark NOT_SERVING, finish in-flight calls, stop; runs shutdown hooks when startup hooks ran here. */
  close(): Promise<void>;
}

const DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024;

/** Marks a request whose bytes did not decode (see `tolerantDefinition`). */
const UNDECODABLE = Symbol('tiffin.grpc.undecodable');
type DecodedRequest = RequestMessage & { [UNDECODABLE]?: unknown };

/**
 * The service definition with a decoder that does not throw: grpc-js answers a throwing decoder with
 * INTERNAL, while bytes that are not a `Request` are the client's mistake (INVALID_ARGUMENT).
 */
function tolerantDefinition(): grpc.ServiceDefinition {
  const definition = inferenceServiceDefinition();
  const call = definition.Call!;
  return {
    ...definition,
    Call: {
      ...call,
      requestDeserialize: (bytes: Buffer): DecodedRequest => {
        try {
          return call.requestDeserialize(bytes) as RequestMessage;
        } catch (err) {
          return { [UNDECODABLE]: err } as DecodedRequest;
        }
      },
    },
  };
}
const RUNTIME_ERROR_MESSAGE = 'An internal error occurred while handling the call; see the server logs.';

/** Serve every API of `svc` over gRPC (the `bentoml.grpc.v1.BentoService` protocol). */
export async function serveGrpc(svc: Service, options: GrpcServerOptions = {}): Promise<GrpcServerHandle> {
  if (options.runtime && options.limits) {
    throw new ConfigError("serveGrpc: pass 'limits' to the runtime's server, not beside a shared 'runtime'");
  }
  const runHooks = options.runStartupHooks ?? true;
  if (runHooks) await svc.startup();
  const maxReceive = options.maxReceiveMessageLength ?? DEFAULT_MAX_MESSAGE;
  const token = resolveApiToken(options.apiToken);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': maxReceive,
    'grpc.max_send_message_length': options.maxSendMessageLength ?? DEFAULT_MAX_MESSAGE,
    interceptors: token ? [authInterceptor(bearerAuth({ token }))] : [],
  });
  const log =
    options.log ??
    ((entry: Record<string, unknown>) => console.error(JSON.stringify({ time: new Date(), ...entry })));
  const metrics = grpcMetrics(options.metricsRegistry);
  let serving = false;
  const runtime =
    options.runtime ??
    new Runtime(svc, {
      timeout: DEFAULT_SERVER_OPTIONS.timeout,
      maxConcurrency: DEFAULT_SERVER_OPTIONS.maxConcurrency,
      retryAfter: DEFAULT_SERVER_OPTIONS.retryAfter,
      logger: logAdapter(log),
      isReady: () => serving,
      registry: options.metricsRegistry,
      limits: resolveLimits(options.limits),
    });
  const codecs = new Map<string, TransportCodec<RequestMessage, ResponseMessage>>();
  for (const api of svc.apis.values()) codecs.set(api.name, protoCodec(api, log));

  server.addService(tolerantDefinition(), {
    Call: (
      call: grpc.ServerUnaryCall<DecodedRequest, ResponseMessage>,
      callback: grpc.sendUnaryData<ResponseMessage>,
    ) => {
      if (UNDECODABLE in call.request) {
        const reason = call.request[UNDECODABLE];
        metrics.total.inc({
          api_name: '<unknown>',
          service_name: svc.name,
          grpc_code: String(GrpcStatus.INVALID_ARGUMENT),
        });
        callback({
          code: GrpcStatus.INVALID_ARGUMENT,
          details: `The request is not a valid ${GRPC_SERVICE_NAME} Request message: ${truncateForMessage(reason instanceof Error ? reason.message : String(reason))}`,
        });
        return;
      }
      const apiName = call.request.api_name ?? '';
      const started = process.hrtime.bigint();
      const labels = { api_name: apiName, service_name: svc.name };
      metrics.inProgress.inc(labels);
      const invocation: Invocation = {
        requestId: newRequestId(),
        api: svc.apis.get(apiName),
        abort: new LazyAbort(),
        onClose: [],
        startedAt: performance.now(),
        timedOut: false,
      };
      call.on('cancelled', () => invocation.abort.abort(new Error('call cancelled')));
      handleCall(svc, runtime, codecs, call, invocation)
        .then(
          (response) => {
            finish(GrpcStatus.OK);
            callback(null, response);
          },
          (err: unknown) => {
            const { code, message } = toStatus(err, apiName, call, log);
            finish(code);
            callback({ code, details: message, metadata: errorMetadata(err) });
          },
        )
        .catch(() => undefined)
        .finally(() => {
          for (const fn of invocation.onClose) fn();
        });
      function finish(code: number) {
        metrics.inProgress.dec(labels);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const known = svc.apis.has(apiName) ? apiName : '<unknown>';
        metrics.total.inc({ api_name: known, service_name: svc.name, grpc_code: String(code) });
        metrics.duration.observe(
          { api_name: known, service_name: svc.name, grpc_code: String(code) },
          seconds,
        );
      }
    },
    ServiceMetadata: (
      _call: grpc.ServerUnaryCall<unknown, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      try {
        callback(null, serviceMetadata(svc));
      } catch (err) {
        log({ level: 'error', msg: 'ServiceMetadata failed', error: String((err as Error)?.stack ?? err) });
        callback({ code: GrpcStatus.INTERNAL, details: RUNTIME_ERROR_MESSAGE });
      }
    },
  });

  const health = new HealthImplementation({ '': 'SERVING', [GRPC_SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);
  if (options.reflection ?? true) new ReflectionService(loadProtocol()).addToServer(server);

  const host = options.host ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${options.port ?? 3001}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );

  serving = true;
  let closed: Promise<void> | undefined;
  return {
    server,
    port,
    address: `${host.includes(':') ? `[${host}]` : host}:${port}`,
    close() {
      closed ??= (async () => {
        health.setStatus('', 'NOT_SERVING');
        health.setStatus(GRPC_SERVICE_NAME, 'NOT_SERVING');
        serving = false;
        await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        if (runHooks) await svc.shutdown();
      })();
      return closed;
    },
  };
}

/** gRPC's probe service, open like /healthz. */
const HEALTH_SERVICE_PREFIX = '/grpc.health.v1.Health/';

/**
 * The auth hook of the gRPC transport: the same check as HTTP, on the call's `authorization` metadata, before
 * the request message is read. A refused call ends with UNAUTHENTICATED and its handler never runs.
 */
function authInterceptor(check: AuthCheck): grpc.ServerInterceptor {
  return (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, proceed) => {
            if (method.path.startsWith(HEALTH_SERVICE_PREFIX)) return proceed(metadata);
            const value = metadata.get('authorization')[0];
            const denied = check(method.path, typeof value === 'string' ? value : undefined);
            if (!denied) return proceed(metadata);
            call.sendStatus({ code: GrpcStatus.UNAUTHENTICATED, details: denied.message });
          },
        }),
    });
}

/** The gRPC adapter of a call (spec 11.2): the runtime's gate, deadline and batching, with the proto codec. */
async function handleCall(
  svc: Service,
  runtime: Runtime,
  codecs: ReadonlyMap<string, TransportCodec<RequestMessage, ResponseMessage>>,
  call: grpc.ServerUnaryCall<RequestMessage, ResponseMessage>,
  invocation: Invocation,
): Promise<ResponseMessage> {
  const message = call.request;
  const apiName = message.api_name ?? '';
  const api = svc.apis.get(apiName);
  const codec = codecs.get(apiName);
  if (!api || !codec) {
    throw new NotFound(`given 'api_name' is not defined in ${svc.name}: '${truncateForMessage(apiName)}'`);
  }
  const request = grpcRequest(call, api, invocation.abort, runtime.limits);
  return runtime.call(api, invocation, request, message, codec);
}

/** An API's proto side: the accepted oneof member in, `protoFields[0]` out. */
function protoCodec(
  api: InferenceApi,
  log: (entry: Record<string, unknown>) => void,
): TransportCodec<RequestMessage, ResponseMessage> {
  return {
    decode: (message, ctx) => readInput(api, message, ctx.request.limits, log),
    async encode(output, ctx) {
      const payload = await api.output.toProto(output as never, ctx.request.limits);
      const field = api.output.protoFields[0];
      if (!field) throw new Error(`${api.output.displayName} declares no protoFields`);
      return { [field]: payload, content: field } as ResponseMessage;
    },
  };
}

/** Headers an error asks for (e.g. `retry-after` on a 503) travel as trailing metadata. */
function errorMetadata(err: unknown): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (isTiffinError(err)) for (const [name, value] of Object.entries(err.headers)) metadata.set(name, value);
  return metadata;
}

function logAdapter(log: (entry: Record<string, unknown>) => void): Logger {
  return { log: (level, msg, fields) => log({ level, msg, ...fields }) };
}

/**
 * The API's input from the message. Whatever goes wrong here is in the message (a decoder that cannot take
 * it), so an unexpected error is INVALID_ARGUMENT too; its stack goes to the log in case it is a bug.
 */
async function readInput(
  api: InferenceApi,
  message: RequestMessage,
  limits: Readonly<Limits>,
  log: (entry: Record<string, unknown>) => void,
): Promise<unknown> {
  try {
    return await api.input.fromProto(selectPayload(api, message), limits);
  } catch (err) {
    if (isTiffinError(err)) throw err;
    log({ level: 'warn', msg: 'gRPC input not readable', api: api.name, error: stackOf(err) });
    throw new InvalidArgument(
      `The request's ${message.content ?? 'payload'} cannot be read as ${api.input.displayName}`,
    );
  }
}

/** The oneof member the input descriptor accepts (spec 11.2 rule 2). */
function selectPayload(api: InferenceApi, message: RequestMessage): ProtoPayload | Uint8Array {
  const field = message.content;
  if (!field) throw new InvalidArgument('"field" cannot be empty.');
  if (field === 'serialized_bytes') return message.serialized_bytes ?? new Uint8Array(0);
  const accepted: readonly ProtoField[] = (api.input as IODescriptor).protoFields;
  if (!accepted.includes(field)) {
    throw new InvalidArgument(
      `'${api.input.displayName}' accepts one of the following fields: '${[...accepted, 'serialized_bytes'].join(',')}' got '${field}' instead.`,
    );
  }
  const payload = message[field];
  if (payload === undefined) throw new InvalidArgument('"field" cannot be empty.');
  return payload;
}

/** A request object for Context: gRPC metadata as headers; the signal fires on cancel and on the deadline. */
function grpcRequest(
  call: grpc.ServerUnaryCall<RequestMessage, ResponseMessage>,
  api: InferenceApi,
  abort: LazyAbort,
  limits: Readonly<Limits>,
): BufferedHttpRequest {
  const headers = new Headers();
  for (const [key, value] of Object.entries(call.metadata.getMap())) {
    if (typeof value === 'string') headers.set(key, value);
  }
  return new BufferedHttpRequest({
    method: 'POST',
    url: api.route,
    headers,
    signal: () => abort.signal,
    limits,
  });
}

function toStatus(
  err: unknown,
  apiName: string,
  call: grpc.ServerUnaryCall<RequestMessage, ResponseMessage>,
  log: (entry: Record<string, unknown>) => void,
): { code: GrpcStatusCode; message: string } {
  if (isTiffinError(err)) return { code: err.grpcStatus, message: clientMessage(err.message) };
  log({ level: 'error', msg: 'gRPC call failed', api: apiName, peer: call.getPeer(), error: stackOf(err) });
  return { code: GrpcStatus.INTERNAL, message: RUNTIME_ERROR_MESSAGE };
}

function stackOf(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
