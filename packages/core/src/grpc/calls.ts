import type * as grpc from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import type { Tracer } from '@opentelemetry/api';
import { grpcErrorAnswer } from '../errors/error-answer.js';
import { GrpcStatus, isTiffinError, truncateForMessage } from '../errors/index.js';
import { BufferedHttpRequest } from '../http/request.js';
import type { Limits } from '../limits/limits.js';
import type { Logger } from '../logging/logger.js';
import { ApiCall } from '../runtime/api-call.js';
import { LazyAbort } from '../runtime/lazy-abort.js';
import { newRequestId } from '../server/request-id.js';
import type { InferenceApi, Service } from '../service/service.js';
import { endRpcSpan, grpcServerCall, withCall } from '../tracing/tracing.js';
import { callMetrics, type GrpcMetrics } from './metrics.js';

/** Marks a request whose bytes did not decode (see `tolerantDefinition`). */
const UNDECODABLE = Symbol('tiffin.grpc.undecodable');
type Decoded<T> = T & { [UNDECODABLE]?: unknown };

/**
 * A service definition whose decoders do not throw: grpc-js answers a throwing decoder with INTERNAL, while
 * bytes that are not the method's request message are the client's mistake (INVALID_ARGUMENT, see
 * `rejectUndecodable`).
 */
export function tolerantDefinition(definition: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      {
        ...method,
        requestDeserialize: (bytes: Buffer) => {
          try {
            return method.requestDeserialize(bytes);
          } catch (err) {
            return { [UNDECODABLE]: err };
          }
        },
      },
    ]),
  );
}

/** Answers INVALID_ARGUMENT and returns true when the call's request did not decode. */
export function rejectUndecodable<Req>(
  call: grpc.ServerUnaryCall<Req, unknown>,
  callback: grpc.sendUnaryData<never>,
  messageName: string,
): boolean {
  const request = call.request as Decoded<Req>;
  if (!(UNDECODABLE in (request as object))) return false;
  const reason = request[UNDECODABLE];
  callback({
    code: GrpcStatus.INVALID_ARGUMENT,
    details: `The request is not a valid ${messageName} message: ${truncateForMessage(reason instanceof Error ? reason.message : String(reason))}`,
  });
  return true;
}

/** What `runApiCall` needs from the server. */
export interface ApiCallDeps {
  svc: Service;
  metrics: GrpcMetrics;
  logger: Logger;
  /** The bounds descriptors check, as over HTTP. */
  limits: Readonly<Limits>;
  /** Traces every call when set, with the RPC semantic conventions (docs/observability.md). */
  tracer?: Tracer | undefined;
}

/**
 * One API call made over gRPC, whatever the service and method: its abort (cancel → abort), the call metrics,
 * the error answer (`grpcErrorAnswer`: a Tiffin error keeps its status and message; anything else is INTERNAL
 * with its stack in the log only, under the call's request id), and the call's close hooks. `work` calls
 * `start(api)` once it knows the API: that makes the call object the runtime and the API function get.
 */
export function runApiCall<Req, Res>(
  deps: ApiCallDeps,
  apiName: string,
  call: grpc.ServerUnaryCall<Req, Res>,
  callback: grpc.sendUnaryData<Res>,
  work: (start: (api: InferenceApi) => ApiCall) => Promise<Res>,
): void {
  const { svc, metrics, logger, limits, tracer } = deps;
  const started = process.hrtime.bigint();
  // A name the service does not have is one label, not one per string a client sends.
  const known = svc.apis.has(apiName) ? apiName : '<unknown>';
  const bound = callMetrics(metrics, svc.name, known);
  bound.start();
  const requestId = newRequestId();
  const abort = new LazyAbort();
  let apiCall: ApiCall | undefined;
  const traced = tracer ? grpcServerCall(tracer, call) : undefined;
  const start = (api: InferenceApi): ApiCall => {
    apiCall = new ApiCall(grpcRequest(call, api, abort, limits), svc.state, { requestId, api, abort });
    apiCall.trace = traced;
    return apiCall;
  };
  call.on('cancelled', () => abort.abort(new Error('call cancelled')));
  const finish = (code: number) => {
    bound.finish(code, Number(process.hrtime.bigint() - started) / 1e9);
    if (traced?.span) endRpcSpan(traced.span, code);
  };
  withCall(traced, work, start)
    .then(
      (response) => {
        finish(GrpcStatus.OK);
        callback(null, response);
      },
      (err: unknown) => {
        const { code, details } = grpcErrorAnswer(err, requestId, logger, traced?.traceId);
        finish(code);
        callback({ code, details, metadata: errorMetadata(err) });
      },
    )
    .catch(() => undefined)
    .finally(() => {
      if (apiCall) for (const fn of apiCall.onClose) fn();
    });
}

/** A call's request as descriptors read it: gRPC metadata as headers; the signal fires on cancel and on the deadline. */
function grpcRequest(
  call: grpc.ServerUnaryCall<unknown, unknown>,
  api: InferenceApi,
  abort: LazyAbort,
  limits: Readonly<Limits>,
): BufferedHttpRequest {
  // Built on first use: most APIs never read them, and a fetch Headers costs microseconds to fill.
  const headers = () => {
    const h = new Headers();
    for (const [key, value] of Object.entries(call.metadata.getMap())) {
      if (typeof value === 'string') h.set(key, value);
    }
    return h;
  };
  return new BufferedHttpRequest({
    method: 'POST',
    url: api.route,
    headers,
    signal: () => abort.signal,
    limits,
  });
}

/** Headers an error asks for (e.g. `retry-after` on a 503) travel as trailing metadata. */
function errorMetadata(err: unknown): grpc.Metadata {
  const metadata = new Metadata();
  if (isTiffinError(err)) for (const [name, value] of Object.entries(err.headers)) metadata.set(name, value);
  return metadata;
}

export function stackOf(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
