import { GrpcStatus, type GrpcStatusCode, grpcStatusForHttp } from './grpc-status.js';

/**
 * The one error catalog. Every error Tiffin raises on purpose is a `TiffinError`; its class decides the
 * HTTP status, the gRPC status and the stable machine-readable `code` a client sees. Anything else thrown by
 * user code is an internal error (500) whose details go to the log, never to the client.
 *
 * Errors are recognised by a brand registered with `Symbol.for`, not by `instanceof`: a service that loads
 * its own copy of `@tiffin/core` (a linked package, a monorepo, an npm duplicate, a CommonJS service file)
 * throws errors of another class object, and those must still answer 4xx, not 500.
 */

/** The cross-copy brand. Versioned so that a future incompatible shape can be told apart. */
const TIFFIN_ERROR_BRAND = Symbol.for('tiffin.error.v1');

export { ERROR_CODES, type ErrorCode, type ErrorCodeEntry, grpcStatusOfCode } from './codes.js';
export { GrpcStatus, type GrpcStatusCode, type GrpcStatusName, grpcStatusForHttp } from './grpc-status.js';

export interface TiffinErrorOptions {
  /** A finer stable code than the class's own (e.g. `TENSOR_SHAPE_MISMATCH`); SCREAMING_SNAKE_CASE, listed in `ERROR_CODES` (codes.ts). */
  code?: string;
  /** Override the class's HTTP status (a number in 400..599). */
  errorCode?: number;
  /** Structured, client-safe detail (e.g. schema validation issues) sent as `detail`. */
  detail?: unknown;
  /** Extra response headers, e.g. `retry-after` on a 503. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The JSON body of every error response (docs/spec/io-descriptors.md D4). */
export interface ErrorBody {
  /** Human-readable message, safe to show to the caller (no server paths, no stack). */
  error: string;
  /** The error class name, e.g. `BadInput`. */
  type: string;
  /** Stable machine-readable code, e.g. `BAD_INPUT`; clients branch on this, not on the message. */
  code: string;
  detail?: unknown;
}

export class TiffinError extends Error {
  static readonly httpStatus: number = 500;
  /** The class's stable code; each subclass sets its own. */
  static readonly code: string = 'INTERNAL_ERROR';
  readonly errorCode: number;
  /** Stable machine-readable code sent in the error body beside `error` and `type`. */
  readonly code: string;
  readonly detail: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(message: string, options: TiffinErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    const ctor = new.target as unknown as { httpStatus: number; code: string };
    this.errorCode = options.errorCode ?? ctor.httpStatus;
    this.code = options.code ?? ctor.code;
    this.detail = options.detail;
    this.headers = options.headers ?? {};
  }

  /** HTTP status a client sees. */
  get httpStatus(): number {
    return this.errorCode;
  }

  get grpcStatus(): GrpcStatusCode {
    return grpcStatusForHttp(this.errorCode);
  }

  /** Client-facing body. 5xx errors keep their message (they were raised on purpose). */
  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.message, type: this.name, code: this.code };
    if (this.detail !== undefined) body.detail = this.detail;
    return body;
  }
}

export class InvalidArgument extends TiffinError {
  static override readonly code: string = 'INVALID_ARGUMENT';
  static override readonly httpStatus: number = 400;
}
/** The request could not be turned into the API's input. */
export class BadInput extends InvalidArgument {
  static override readonly code: string = 'BAD_INPUT';
}
/** No or wrong credentials (the bearer token); answered with `WWW-Authenticate: Bearer`. */
export class Unauthorized extends TiffinError {
  static override readonly httpStatus: number = 401;
  static override readonly code: string = 'UNAUTHORIZED';
}
export class NotFound extends TiffinError {
  static override readonly code: string = 'NOT_FOUND';
  static override readonly httpStatus: number = 404;
  override get grpcStatus(): GrpcStatusCode {
    return GrpcStatus.NOT_FOUND;
  }
}
export class MethodNotAllowed extends TiffinError {
  static override readonly code: string = 'METHOD_NOT_ALLOWED';
  static override readonly httpStatus: number = 405;
}
/** The client did not send its request body in time (it stalled between chunks): 408, connection closed. */
export class RequestTimeout extends TiffinError {
  static override readonly code: string = 'REQUEST_TIMEOUT';
  static override readonly httpStatus: number = 408;
}
export class PayloadTooLarge extends TiffinError {
  static override readonly code: string = 'PAYLOAD_TOO_LARGE';
  static override readonly httpStatus: number = 413;
}
export class UnsupportedMediaType extends TiffinError {
  static override readonly code: string = 'UNSUPPORTED_MEDIA_TYPE';
  static override readonly httpStatus: number = 415;
}
export class UnprocessableEntity extends TiffinError {
  static override readonly code: string = 'UNPROCESSABLE_ENTITY';
  static override readonly httpStatus: number = 422;
}
export class TooManyRequests extends TiffinError {
  static override readonly code: string = 'TOO_MANY_REQUESTS';
  static override readonly httpStatus: number = 429;
}
export class InternalServerError extends TiffinError {
  static override readonly code: string = 'INTERNAL_ERROR';
  static override readonly httpStatus: number = 500;
}
export class ServiceUnavailable extends TiffinError {
  static override readonly code: string = 'SERVICE_UNAVAILABLE';
  static override readonly httpStatus: number = 503;
}
export class GatewayTimeout extends TiffinError {
  static override readonly code: string = 'DEADLINE_EXCEEDED';
  static override readonly httpStatus: number = 504;
}
/**
 * Work stopped because it was cancelled (a task cancelled by id, a generation whose client went away): 409
 * `CANCELLED`. Nobody usually reads the answer; a task's status carries it.
 */
export class Cancelled extends TiffinError {
  static override readonly code: string = 'CANCELLED';
  static override readonly httpStatus: number = 409;
  override get grpcStatus(): GrpcStatusCode {
    return GrpcStatus.CANCELLED;
  }
}
/** An optional package a feature needs is not installed; the message names the package to add. */
export class MissingDependencyException extends TiffinError {
  static override readonly code: string = 'MISSING_DEPENDENCY';
  constructor(message: string, options: TiffinErrorOptions = {}) {
    super(message, options);
  }
  /** Standard message: `<feature> requires <pkg>; install it with \`pnpm add <pkg>\``. */
  static forPackage(pkg: string, feature: string, cause?: unknown): MissingDependencyException {
    return new MissingDependencyException(
      `${feature} requires the package '${pkg}'. Install it with \`pnpm add ${pkg}\` (or npm install ${pkg}).`,
      { cause },
    );
  }
}
export class ConfigError extends TiffinError {
  static override readonly code: string = 'CONFIG_ERROR';
}
export class CLIException extends TiffinError {
  static override readonly code: string = 'CLI_ERROR';
}
export class ImportServiceError extends TiffinError {
  static override readonly code: string = 'IMPORT_SERVICE_ERROR';
}
export class NotImplementedError extends TiffinError {
  static override readonly code: string = 'NOT_IMPLEMENTED';
  static override readonly httpStatus: number = 500;
}

// On the prototype, so every instance of every subclass carries it without a per-instance field.
Object.defineProperty(TiffinError.prototype, TIFFIN_ERROR_BRAND, { value: true });

/**
 * Whether `err` is a Tiffin error from this or any other copy of `@tiffin/core` (see the brand above).
 * The shape is checked too, so a foreign object that merely carries the symbol is not trusted blindly.
 */
export function isTiffinError(err: unknown): err is TiffinError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as Partial<TiffinError> & Record<symbol, unknown>;
  return (
    e[TIFFIN_ERROR_BRAND] === true &&
    typeof e.errorCode === 'number' &&
    typeof e.toBody === 'function' &&
    typeof e.message === 'string'
  );
}

/** The body sent for an unexpected exception: no details leave the server (docs/spec/io-descriptors.md D4). */
export function internalErrorBody(requestId?: string): ErrorBody {
  return {
    error: requestId
      ? `An internal error occurred while handling the request (request id ${requestId}); see the server logs.`
      : 'An internal error occurred while handling the request; see the server logs.',
    type: 'InternalServerError',
    code: InternalServerError.code,
  };
}

export { CLIENT_MESSAGE_LENGTH, clientMessage } from './client-message.js';
export { MESSAGE_VALUE_LENGTH, truncateForMessage } from './truncate.js';
