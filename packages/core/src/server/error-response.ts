import {
  BadInput,
  clientMessage,
  type ErrorBody,
  internalErrorBody,
  isTiffinError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  UnsupportedMediaType,
} from '../errors/index.js';
import type { Logger } from './logger.js';

export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
}

/** Koa/http-errors style client errors (status 4xx, exposable) thrown by middleware we use. */
interface ExposedHttpError {
  status: number;
  expose: boolean;
  message: string;
}

function isExposedClientError(err: unknown): err is ExposedHttpError {
  const e = err as Partial<ExposedHttpError> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.status === 'number' &&
    e.status >= 400 &&
    e.status < 500 &&
    e.expose === true
  );
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
 * Spec 10.3 as changed by D1/D4: a TiffinError answers with its own status and `toBody()`; any other error is
 * a 500 whose body says only that something failed, while the stack goes to the log with the request id.
 * 5xx TiffinErrors other than 503 are logged as errors with their stack.
 */
export function errorAnswer(err: unknown, requestId: string, logger: Logger): ErrorAnswer {
  if (isTiffinError(err)) {
    const status = err.httpStatus;
    // A 503 is the server saying "not now" (starting, draining, at its concurrency limit): a state the
    // request line already records, not a fault, so no error record and no stack.
    if (status >= 500 && status !== 503) {
      logger.log('error', 'request failed', {
        requestId,
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
  if (isExposedClientError(err)) {
    const { type, code } = CLIENT_ERRORS.get(err.status) ?? { type: BadInput.name, code: BadInput.code };
    return { status: err.status, body: { error: clientMessage(err.message), type, code } };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  logger.log('error', 'unhandled error', { requestId, status: 500, error: e.message, stack: e.stack });
  return { status: 500, body: internalErrorBody(requestId) };
}

/** The D4 body as bytes with its content type. */
export function encodeErrorBody(body: ErrorBody): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}
