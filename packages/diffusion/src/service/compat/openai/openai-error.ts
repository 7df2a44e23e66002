import { BadInput, type Service } from '@tiffin/core';
import { errorAnswer } from '@tiffin/core/internal';

/** A route group's error mapper, as `Service.group` takes it (docs/server.md, route groups). */
type ErrorMapper = NonNullable<Parameters<Service['group']>[0]['errors']>;

/** The body of every error the OpenAI-compatible routes answer, as OpenAI's API writes it. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The catalog's codes that OpenAI names otherwise; any other code is sent lower-cased (`invalid_size`). */
const OPENAI_CODES: Readonly<Record<string, string>> = {
  UNAUTHORIZED: 'invalid_api_key',
  PAYLOAD_TOO_LARGE: 'request_too_large',
};

/**
 * A request OpenAI's API refuses with a 400 naming the parameter: a catalog error (its `code` one of
 * docs/errors.md) whose `detail.param` the OpenAI group's mapper sends as `param`.
 */
export function invalidRequest(message: string, refusal: { code: string; param?: string }): BadInput {
  const { code, param } = refusal;
  return new BadInput(message, { code, detail: param === undefined ? undefined : { param } });
}

/**
 * The OpenAI group's error shape: the catalog's answer as OpenAI's API writes an error, its stable code as `code`
 * (lower-cased, or OpenAI's own name for it) and `detail.param` as `param`; a 5xx other than 503 says only that
 * the generation failed.
 */
export const openAIErrors: ErrorMapper = ({ status, body }) => {
  const detail = body.detail as { param?: unknown } | undefined;
  const failed = status >= 500 && status !== 503;
  const error: OpenAIErrorBody['error'] = {
    message: failed ? 'The server failed to generate the image' : body.error,
    type:
      status === 401 ? 'invalid_authentication' : status >= 500 ? 'server_error' : 'invalid_request_error',
    param: typeof detail?.param === 'string' ? detail.param : null,
    // An unknown `model` is OpenAI's own 404 `model_not_found`.
    code:
      body.code === 'NOT_FOUND' && detail?.param === 'model'
        ? 'model_not_found'
        : (OPENAI_CODES[body.code] ?? body.code.toLowerCase()),
  };
  return { status, body: { error } satisfies OpenAIErrorBody };
};

/** Any error in OpenAI's shape, for one answered inside a stream (an `error` event) rather than by the group. */
export function openAIErrorObject(err: unknown, requestId = ''): OpenAIErrorBody['error'] {
  return (openAIErrors(errorAnswer(err, requestId)).body as OpenAIErrorBody).error;
}
