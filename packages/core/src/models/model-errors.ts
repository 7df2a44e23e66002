import { type ErrorBody, InternalServerError, TiffinError } from '../errors/index.js';
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
  if (error.status !== undefined && error.code !== undefined)
    return new ThreadError({ ...error, status: error.status, code: error.code });
  return new ModelRunFailed(model, error.message);
}
