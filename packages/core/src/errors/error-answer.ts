import { STATUS_CODES } from 'node:http';
import type { Logger } from '../logging/logger.js';
import {
  BadInput,
  clientMessage,
  type ErrorBody,
  GrpcStatus,
  type GrpcStatusCode,
  grpcStatusForHttp,
  internalErrorBody,
  isTiffinError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  UnsupportedMediaType,
} from './index.js';

export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
}

/** Koa/http-errors style client errors: a 4xx status, the message shown when `expose`. */
interface HttpClientError {
  status: number;
  expose: boolean;
  message: string;
}

/**
 * The client error `err` stands for, as body parsers report one: a 4xx `status` or `statusCode` (http-errors,
 * raw-body, co-body, as Koa reads them) or `httpCode` (formidable, e.g. a truncated multipart body), with its
 * message only when `expose` is set (co-body's JSON syntax error carries a 400 without it); null otherwise.
 */
function clientErrorOf(err: unknown): HttpClientError | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as {
    status?: unknown;
    statusCode?: unknown;
    httpCode?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  const status = [e.status, e.statusCode, e.httpCode].find((s) => typeof s === 'number');
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  const expose = e.expose === true;
  return { status, expose, message: expose && typeof e.message === 'string' ? e.message : '' };
}

/**
 * The catalog's type and code for an exposed client error's status (`ctx.throw(404)` in a mounted route, a body
 * parser's 413), so clients branch on the same codes whoever raised it; other statuses read as BadInput.
 */
const CLIENT_ERRORS: ReadonlyMap<number, { type: string; code: string }> = new Map(
  [
    BadInput,
    Unauthorized,
    NotFound,
    MethodNotAllowed,
    PayloadTooLarge,
    UnsupportedMediaType,
    UnprocessableEntity,
    TooManyRequests,
  ].map((c) => [c.httpStatus, { type: c.name, code: c.code }]),
);

/**
 * The one error answer of the server (docs/spec/io-descriptors.md §10.3 as changed by D1/D4), for the request pipeline and for the
 * answers given outside it: a TiffinError answers with its own status and `toBody()`; any other error is a 500
 * whose body says only that something failed, while the stack goes to the log with the request id.
 * 5xx TiffinErrors other than 503 are logged as errors with their stack; without a `logger` the caller has
 * logged the error already.
 */
export function errorAnswer(err: unknown, requestId: string, logger?: Logger, traceId?: string): ErrorAnswer {
  if (isTiffinError(err)) {
    const status = err.httpStatus;
    // A 503 is the server saying "not now" (starting, draining, at its concurrency limit): a state the
    // request line already records, not a fault, so no error record and no stack.
    if (status >= 500 && status !== 503) {
      logger?.log('error', 'request failed', {
        requestId,
        ...(traceId ? { traceId } : {}),
        status,
        type: err.name,
        error: err.message,
        stack: err.stack,
      });
    }
    const body = err.toBody();
    body.error = clientMessage(body.error);
    return { status, body };
  }
  const clientError = clientErrorOf(err);
  if (clientError) {
    const { status, expose, message } = clientError;
    const { type, code } = CLIENT_ERRORS.get(status) ?? { type: BadInput.name, code: BadInput.code };
    const error = expose ? clientMessage(message) : (STATUS_CODES[status] ?? 'Bad Request');
    return { status, body: { error, type, code } };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  logger?.log('error', 'unhandled error', {
    requestId,
    ...(traceId ? { traceId } : {}),
    status: 500,
    error: e.message,
    stack: e.stack,
  });
  return { status: 500, body: internalErrorBody(requestId) };
}

/** The docs/spec/io-descriptors.md D4 body as bytes with its content type. */
export function encodeErrorBody(body: ErrorBody): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** The error answer of a gRPC call: the status and its details (the client-facing message). */
export interface GrpcErrorAnswer {
  code: GrpcStatusCode;
  details: string;
}

/**
 * `errorAnswer` for gRPC: the same catalog, message and logging, with the gRPC status the error's class
 * gives (`TiffinError.grpcStatus`) or, for an error of another kind, the one its HTTP status maps to.
 */
export function grpcErrorAnswer(
  err: unknown,
  requestId: string,
  logger?: Logger,
  traceId?: string,
): GrpcErrorAnswer {
  const { status, body } = errorAnswer(err, requestId, logger, traceId);
  const code = isTiffinError(err)
    ? err.grpcStatus
    : status === 500
      ? GrpcStatus.INTERNAL
      : grpcStatusForHttp(status);
  return { code, details: body.error };
}
