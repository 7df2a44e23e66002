import {
  BadInput,
  InvalidArgument,
  isTiffinError,
  PayloadTooLarge,
  TiffinError,
  UnprocessableEntity,
  UnsupportedMediaType,
} from '../errors/index.js';

/** A failure as it crosses a thread boundary. */
export interface WireError {
  message: string;
  type: string;
  status?: number;
  code?: string;
}

/** An error as it crosses a thread boundary: a Tiffin error keeps its status and code. */
export function wireError(err: unknown): WireError {
  if (isTiffinError(err))
    return { message: err.message, type: err.name, status: err.httpStatus, code: err.code };
  const e = err instanceof Error ? err : new Error(String(err));
  return { message: e.message, type: e.name };
}

/** A Tiffin error thrown inside a worker thread, with its status, code and type as they were. */
class ThreadError extends TiffinError {
  constructor(error: WireError & { status: number; code: string }) {
    super(error.message, { errorCode: error.status, code: error.code });
    this.name = error.type;
  }
}

/** The client-error classes a thread's error is rebuilt as (so `instanceof BadInput` holds on this side). */
const CLIENT_ERRORS = [BadInput, InvalidArgument, PayloadTooLarge, UnsupportedMediaType, UnprocessableEntity];

/** A Tiffin error that crossed a thread boundary, as it was (status, code, type); undefined for any other. */
export function rebuildTiffinError(error: WireError): TiffinError | undefined {
  if (error.status === undefined || error.code === undefined) return undefined;
  const known = CLIENT_ERRORS.find(
    (c) => c.name === error.type && c.code === error.code && c.httpStatus === error.status,
  );
  if (known) return new known(error.message);
  return new ThreadError({ ...error, status: error.status, code: error.code });
}
