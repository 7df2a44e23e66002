import type { ErrorAnswer } from './error-answer.js';

/**
 * What a route group answers an error with, in its own body shape (OpenAI's `{"error": {…}}`, A1111's
 * `{error, detail, body, errors}`): the status (the catalog's, or another one the group's clients expect, 422 for
 * a 400, say) and the JSON body.
 */
export interface MappedError {
  status: number;
  body: unknown;
}

/**
 * A route group's error mapper: the one error answer of the catalog (its status and body, with the stable `code`,
 * the client-safe message and `detail`; a 5xx already stripped of internals) turned into the group's shape. The
 * catalog's answer is what metrics count and logs record; the mapper only changes how it is written
 * (docs/server.md, route groups).
 */
export type ErrorMapper = (answer: ErrorAnswer) => MappedError;
