import { UnprocessableEntity } from '../errors/index.js';
import { DEFAULT_LIMITS, type Limits } from '../limits/limits.js';
import type { NDArray } from '../ndarray/ndarray.js';

/**
 * The answer a call would get holds more values than the server sends (`maxAnswerElements`): 422
 * `ANSWER_TOO_LARGE`. What the request asks for (many rows, an upsampling of a large input, a shape taken from
 * an input value) is more than one answer may carry; a smaller request gets through.
 */
export class AnswerTooLarge extends UnprocessableEntity {
  static override readonly code: string = 'ANSWER_TOO_LARGE';
}

/**
 * Refuse an answer of arrays that hold more than `maxAnswerElements` values in all, before any of it is
 * encoded: a JSON answer costs 10–25 bytes a value and its encoding holds the thread that writes it.
 */
export function checkAnswerSize(arrays: Iterable<NDArray>, limits: Readonly<Limits> | undefined): void {
  const max = (limits ?? DEFAULT_LIMITS).maxAnswerElements;
  let total = 0;
  for (const array of arrays) total += array.size;
  if (total > max)
    throw new AnswerTooLarge(
      `The answer holds ${total} values; this server sends at most ${max} (maxAnswerElements). Send a smaller request.`,
    );
}

/**
 * Refuse, before anything runs, a request whose answer is known to hold more than `maxAnswerElements` values
 * (`atLeast`: what the model's declared output shapes make of the request's inputs): the same 422 the answer
 * would get after the run, without the run.
 */
export function checkDeclaredAnswerSize(atLeast: number, limits: Readonly<Limits> | undefined): void {
  const max = (limits ?? DEFAULT_LIMITS).maxAnswerElements;
  if (atLeast > max)
    throw new AnswerTooLarge(
      `The answer would hold ${atLeast} values (the model's declared outputs for this input); this server sends at most ${max} (maxAnswerElements). Send a smaller request.`,
    );
}
