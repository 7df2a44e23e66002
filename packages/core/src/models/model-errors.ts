import { type ErrorBody, InternalServerError, type TiffinError } from '../errors/index.js';
import { rebuildTiffinError, type WireError } from '../threads/thread-errors.js';

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

/** A worker's failure on this side of the thread boundary. */
export function rebuildError(model: string, error: WireError): TiffinError {
  return rebuildTiffinError(error) ?? new ModelRunFailed(model, error.message);
}
