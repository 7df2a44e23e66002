import {
  BadInput,
  type ErrorBody,
  InternalServerError,
  InvalidArgument,
  PayloadTooLarge,
  TiffinError,
  UnprocessableEntity,
  UnsupportedMediaType,
} from '../errors/index.js';
import type { WireError } from './worker-protocol.js';

/**
 * The model's runtime threw while running a call. The log line keeps the runtime's own message (it may name
 * files, kernels, internal shapes); the client gets a short, safe one.
 */
export class ModelRunFailed extends InternalServerError {
  static override readonly code: string = 'MODEL_RUN_FAILED';

  constructor(
    readonly model: string,
    runtimeMessage: string,
  ) {
    super(`Model '${model}' failed to run: ${runtimeMessage}`);
  }

  override toBody(): ErrorBody {
    return {
      error: `Model '${this.model}' failed to run this input; the server log has the runtime's message.`,
      type: this.name,
      code: this.code,
    };
  }
}

/** A Tiffin error thrown inside a worker thread, with its status, code and type as they were. */
class ThreadError extends TiffinError {
  constructor(error: WireError & { status: number; code: string }) {
    super(error.message, { errorCode: error.status, code: error.code });
    this.name = error.type;
  }
}

/** A worker's failure on this side of the thread boundary. */
export function rebuildError(model: string, error: WireError): TiffinError {
  return rebuildTiffinError(error) ?? new ModelRunFailed(model, error.message);
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
