import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import type { Registry } from 'prom-client';
import type { ResponseCacheDeps } from '../cache/api-cache.js';
import { grpcErrorAnswer } from '../errors/error-answer.js';
import {
  ConfigError,
  GrpcStatus,
  InvalidArgument,
  isTiffinError,
  NotFound,
  truncateForMessage,
} from '../errors/index.js';
import { hasGrpcOutput, type IODescriptor, noGrpcSide } from '../io/descriptor.js';
import { type LimitOptions, type Limits, resolveLimits } from '../limits/limits.js';
import { defaultLogger, type Logger, silentLogger } from '../logging/logger.js';
import type { ApiCall } from '../runtime/api-call.js';
import { Runtime, type TransportCodec } from '../runtime/runtime.js';
import { type AuthCheck, bearerAuth, resolveApiToken } from '../server/auth.js';
import { DEFAULT_SERVER_OPTIONS } from '../server/options.js';
import { newRequestId } from '../server/request-id.js';
import type { InferenceApi, Service } from '../service/service.js';
import { resolveTracer } from '../tracing/tracing.js';
import type { ProtoField, ProtoPayload, RequestMessage, ResponseMessage } from '../wire/proto/messages.js';
import { GrpcAnswerCache } from './answer-cache.js';
import { grpcCallOptions } from './call-options.js';
import { rejectUndecodable, runApiCall, stackOf, tolerantDefinition } from './calls.js';
import { addHealthService } from './health.js';
import { INFERENCE_V2_PROBE_METHODS, inferenceV2Implementation } from './inference-v2.js';
import { messageArrivalInterceptor } from './message-arrival.js';
import { grpcMetrics } from './metrics.js';
import { ndarrayRequestDeserializer } from './ndarray-request.js';
import { ndarrayResponseSerializer } from './ndarray-response.js';
import {
  GRPC_SERVICE_NAME,
  INFERENCE_V2_SERVICE_NAME,
  inferenceServiceDefinition,
  inferenceV2ServiceDefinition,
  loadProtocol,
} from './proto.js';
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
  /**
   * Serve the Open Inference Protocol (KServe v2) `inference.GRPCInferenceService` beside Tiffin's own
   * service (default true), as `serve({ inferenceProtocol })` does over HTTP.
   */
  inferenceProtocol?: boolean;
  /** Serve grpc.reflection.v1(alpha) (default true). */
  reflection?: boolean;
  /**
   * Where unexpected errors are logged, as `serve({ logger })` (default: the same JSON lines on stdout; `false`
   * silences them).
   */
  logger?: Logger | false;
  /**
   * @deprecated Pass `logger`. A function given one object per record (`level`, `msg` and the fields);
   * kept so that code written for it still runs.
   */
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Bearer token every call must carry in its `authorization` metadata (`Bearer <token>`); missing or wrong →
   * UNAUTHENTICATED. Default `$TIFFIN_API_TOKEN`; unset or empty → no auth. The health service stays open.
   */
  apiToken?: string;
  /**
   * Bytes of request messages held across calls in flight (default 256 MiB), for a server with a runtime of
   * its own; with `runtime` given, that runtime's budget (`serve({ maxBufferedBytes })`) is shared. A message
   * that would pass it ends with UNAVAILABLE.
   */
  maxBufferedBytes?: number;
  /**
   * Seconds a call's request message may take to arrive once the call started (default 60); then the call
   * ends with DEADLINE_EXCEEDED and what arrived of the message is dropped: a client that sends all but the
   * last byte of a large message holds its memory no longer.
   */
  messageTimeout?: number;
  /**
   * Connection limits: seconds between the server's keepalive pings (default 60) and how long a ping may go
   * unanswered before the connection closes (default 20); seconds a connection may stay without a call
   * (default 300) and open in all (default 3600, then `connectionAgeGrace` seconds, default 30, for the
   * calls on it to finish).
   */
  keepaliveTime?: number;
  keepaliveTimeout?: number;
  connectionIdle?: number;
  connectionAge?: number;
  connectionAgeGrace?: number;
  /** Run the service's startup hooks before serving (default true; false when the HTTP server already did). */
  runStartupHooks?: boolean;
  /**
   * The invocation core to call APIs through: pass the HTTP app's (`handle.app.runtime`) so both transports
   * share one concurrency gate and one batcher per API. Default: a runtime of its own with the HTTP server's
   * default limits (timeout 60 s, 128 calls at once).
   */
  runtime?: Runtime;
  /**
   * The HTTP server's response cache (`handle.app.cache`, with its `runtime`): `Call` and v2 `ModelInfer` of an
   * API with `cache` are answered from it (docs/cache.md, other protocols). Default: none.
   */
  cache?: ResponseCacheDeps | undefined;
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

/** The defaults of the time limits of `GrpcServerOptions`, in seconds. */
const DEFAULT_CONNECTION_LIMITS = {
  messageTimeout: 60,
  keepaliveTime: 60,
  keepaliveTimeout: 20,
  connectionIdle: 300,
  connectionAge: 3600,
  connectionAgeGrace: 30,
};

/** The time limits `options` sets (an explicit `undefined` leaves the default). */
function definedOnly(options: GrpcServerOptions): Partial<typeof DEFAULT_CONNECTION_LIMITS> {
  const out: Partial<Record<keyof typeof DEFAULT_CONNECTION_LIMITS, number>> = {};
  for (const key of Object.keys(DEFAULT_CONNECTION_LIMITS) as Array<keyof typeof DEFAULT_CONNECTION_LIMITS>) {
    const value = options[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * Serve every API of `svc` over gRPC: Tiffin's `bentoml.grpc.v1.BentoService` and, for the APIs with a tensor
 * form, the Open Inference Protocol's `inference.GRPCInferenceService`, on one port.
 */
export async function serveGrpc(svc: Service, options: GrpcServerOptions = {}): Promise<GrpcServerHandle> {
  if (options.runtime && options.limits) {
    throw new ConfigError("serveGrpc: pass 'limits' to the runtime's server, not beside a shared 'runtime'");
  }
  const runHooks = options.runStartupHooks ?? true;
  if (runHooks) await svc.startup();
  const maxReceive = options.maxReceiveMessageLength ?? DEFAULT_MAX_MESSAGE;
  const token = resolveApiToken(options.apiToken);
  const logger = grpcLogger(options);
  let serving = false;
  const runtime =
    options.runtime ??
    new Runtime(svc, {
      timeout: DEFAULT_SERVER_OPTIONS.timeout,
      maxConcurrency: DEFAULT_SERVER_OPTIONS.maxConcurrency,
      retryAfter: DEFAULT_SERVER_OPTIONS.retryAfter,
      logger,
      isReady: () => serving,
      registry: options.metricsRegistry,
      limits: resolveLimits(options.limits),
      maxBufferedBytes: options.maxBufferedBytes,
      tracer: resolveTracer(undefined),
    });
  const metrics = grpcMetrics(options.metricsRegistry);
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...definedOnly(options) };
  const ms = (seconds: number) => Math.round(seconds * 1000);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': maxReceive,
    'grpc.max_send_message_length': options.maxSendMessageLength ?? DEFAULT_MAX_MESSAGE,
    'grpc.keepalive_time_ms': ms(limits.keepaliveTime),
    'grpc.keepalive_timeout_ms': ms(limits.keepaliveTimeout),
    'grpc.max_connection_idle_ms': ms(limits.connectionIdle),
    'grpc.max_connection_age_ms': ms(limits.connectionAge),
    'grpc.max_connection_age_grace_ms': ms(limits.connectionAgeGrace),
    // First: it is handed grpc-js's own call.
    interceptors: [
      messageArrivalInterceptor({
        timeoutMs: ms(limits.messageTimeout),
        budget: runtime.bodyBudget,
        // Counted as calls whose API is not known yet, as undecodable messages are.
        onEnded: (code) =>
          metrics.total.inc({ api_name: '<unknown>', service_name: svc.name, grpc_code: String(code) }),
      }),
      ...(token ? [authInterceptor(bearerAuth({ token }))] : []),
    ],
  });
  const codecs = new Map<string, TransportCodec<RequestMessage, ResponseMessage>>();
  // APIs with `cache` answer a repeated Call from it (docs/cache.md, other protocols).
  const callCache = options.cache ? new GrpcAnswerCache(options.cache, 'grpc-call') : undefined;
  for (const api of svc.apis.values()) codecs.set(api.name, protoCodec(api, logger));
  // An API registered while serving (a repository's new model) is called by name from then on.
  svc.watchApis((api) => codecs.set(api.name, protoCodec(api, logger)));

  const deps = { svc, metrics, logger, limits: runtime.limits, tracer: runtime.tracer };
  // Float/double NDArrays are read and written as blocks of bytes; everything else through protobufjs.
  const protocol = loadProtocol();
  const base = inferenceServiceDefinition();
  const callMethod = base.Call!;
  const callService = tolerantDefinition({
    ...base,
    Call: {
      ...callMethod,
      requestDeserialize: ndarrayRequestDeserializer(protocol, callMethod.requestDeserialize),
      responseSerialize: ndarrayResponseSerializer(protocol, callMethod.responseSerialize),
    },
  });
  server.addService(callService, {
    Call: (
      call: grpc.ServerUnaryCall<RequestMessage, ResponseMessage>,
      callback: grpc.sendUnaryData<ResponseMessage>,
    ) => {
      if (rejectUndecodable(call, callback, `${GRPC_SERVICE_NAME} Request`)) {
        metrics.total.inc({
          api_name: '<unknown>',
          service_name: svc.name,
          grpc_code: String(GrpcStatus.INVALID_ARGUMENT),
        });
        return;
      }
      const apiName = call.request.api_name ?? '';
      runApiCall(deps, apiName, call, callback, (start) =>
        handleCall(svc, runtime, codecs, call, start, callCache),
      );
    },
    ServiceMetadata: (
      _call: grpc.ServerUnaryCall<unknown, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      try {
        callback(null, serviceMetadata(svc));
      } catch (err) {
        callback(grpcErrorAnswer(err, newRequestId(), logger));
      }
    },
  });

  const services = [GRPC_SERVICE_NAME];
  if (options.inferenceProtocol ?? true) {
    services.push(INFERENCE_V2_SERVICE_NAME);
    server.addService(
      tolerantDefinition(inferenceV2ServiceDefinition()),
      inferenceV2Implementation({ ...deps, runtime, isReady: () => serving, cache: options.cache }),
    );
  }

  // As /readyz: serving, and every readiness check of the service passing.
  addHealthService(server, services, () => serving && svc.notReadyReason() === null);
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
            if (
              method.path.startsWith(HEALTH_SERVICE_PREFIX) ||
              INFERENCE_V2_PROBE_METHODS.has(method.path)
            ) {
              return proceed(metadata);
            }
            const value = metadata.get('authorization')[0];
            const denied = check(method.path, typeof value === 'string' ? value : undefined);
            if (!denied) return proceed(metadata);
            call.sendStatus({ code: GrpcStatus.UNAUTHENTICATED, details: denied.message });
          },
        }),
    });
}

/** The gRPC adapter of a call (docs/spec/io-descriptors.md §11.2): the runtime's gate, deadline and batching, with the proto codec. */
async function handleCall(
  svc: Service,
  runtime: Runtime,
  codecs: ReadonlyMap<string, TransportCodec<RequestMessage, ResponseMessage>>,
  call: grpc.ServerUnaryCall<RequestMessage, ResponseMessage>,
  start: (api: InferenceApi) => ApiCall,
  cache: GrpcAnswerCache | undefined,
): Promise<ResponseMessage> {
  const message = call.request;
  const apiName = message.api_name ?? '';
  const api = svc.apis.get(apiName);
  const codec = codecs.get(apiName);
  if (!api || !codec) {
    throw new NotFound(`given 'api_name' is not defined in ${svc.name}: '${truncateForMessage(apiName)}'`);
  }
  const apiCall = start(api);
  grpcCallOptions(apiCall, call);
  const compute = () => runtime.call(api, apiCall, message, codec);
  // The key is the request less its API's name (in the key already).
  const { api_name: _name, ...asked } = message;
  return cache ? cache.answer(api, asked, call, compute) : compute();
}

/** An API's proto side: the accepted oneof member in, `protoFields[0]` out. */
function protoCodec(api: InferenceApi, logger: Logger): TransportCodec<RequestMessage, ResponseMessage> {
  // An output with no gRPC side is refused before the function runs, not after its work is done.
  const answerable = hasGrpcOutput(api.output);
  return {
    decode: (message, ctx) =>
      answerable
        ? readInput(api, message, ctx.request.limits, logger)
        : Promise.reject(noGrpcSide(api.output, 'output')),
    async encode(output, ctx) {
      const payload = await api.output.toProto(output as never, ctx.request.limits);
      const field = api.output.protoFields[0];
      if (!field) throw new Error(`${api.output.displayName} declares no protoFields`);
      return { [field]: payload, content: field } as ResponseMessage;
    },
  };
}

/** The logger of `serveGrpc`'s options: `logger`, else the deprecated `log` function, else the default. */
function grpcLogger(options: GrpcServerOptions): Logger {
  if (options.logger === false) return silentLogger;
  if (options.logger) return options.logger;
  const log = options.log;
  if (log) return { log: (level, msg, fields) => log({ level, msg, ...fields }) };
  return defaultLogger();
}

/**
 * The log message of a gRPC input a descriptor failed to read with an error of its own: the client is answered
 * INVALID_ARGUMENT, so only this line shows that the decoder, not the message, may be at fault (the fuzzer counts it).
 */
export const GRPC_INPUT_NOT_READABLE = 'gRPC input not readable';

/**
 * The API's input from the message. Whatever goes wrong here is in the message (a decoder that cannot take
 * it), so an unexpected error is INVALID_ARGUMENT too; its stack goes to the log in case it is a bug.
 */
async function readInput(
  api: InferenceApi,
  message: RequestMessage,
  limits: Readonly<Limits>,
  logger: Logger,
): Promise<unknown> {
  try {
    return await api.input.fromProto(selectPayload(api, message), limits);
  } catch (err) {
    if (isTiffinError(err)) throw err;
    logger.log('warn', GRPC_INPUT_NOT_READABLE, { api: api.name, error: stackOf(err) });
    throw new InvalidArgument(
      `The request's ${message.content ?? 'payload'} cannot be read as ${api.input.displayName}`,
    );
  }
}

/** The oneof member the input descriptor accepts (docs/spec/io-descriptors.md §11.2 rule 2). */
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
