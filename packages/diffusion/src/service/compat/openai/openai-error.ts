import { isTiffinError } from '@tiffin/core';

/** The body of every error the OpenAI-compatible routes answer, as OpenAI's API writes it. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** An error to answer in OpenAI's shape, with its HTTP status. */
export class OpenAIError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: string = status === 401 ? 'invalid_authentication' : 'invalid_request_error',
  ) {
    super(message);
  }

  body(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/**
 * Any error thrown while serving an OpenAI route, in OpenAI's shape: the service's own 4xx keep their status and
 * message (their stable code as `code`); anything else is a 500 with no internal detail.
 */
export function toOpenAIError(err: unknown): OpenAIError {
  if (err instanceof OpenAIError) return err;
  if (isTiffinError(err)) {
    const status = err.httpStatus;
    if (status < 500) return new OpenAIError(status, err.message, null, err.code.toLowerCase());
    return new OpenAIError(
      status,
      status === 503 ? err.message : 'The server failed to generate the image',
      null,
      err.code.toLowerCase(),
      'server_error',
    );
  }
  return new OpenAIError(500, 'The server failed to generate the image', null, null, 'server_error');
}
