import type { Context } from '../context/context.js';
import { checkDeclaredAnswerSize } from '../io/answer-size.js';
import { declaredAnswerElements } from '../signature/declared-answer.js';
import { checkEmptyDimensions } from '../signature/empty-dimensions.js';
import type { NamedTensors } from '../signature/named-tensors.js';
import type { ModelSignature } from '../signature/signature.js';

/** A request as a descriptor reads it, and the server's limits it carries (absent: the defaults). */
export type ModelRequest = Context['request'];
export type RequestLimits = ModelRequest['limits'] | undefined;

/**
 * What a zero-code model's request must pass, once its descriptor has checked it against the signature and
 * before it waits for a batch or a runner, on every route (`/predict`, the Open Inference Protocol, gRPC): no
 * empty dimension the model cannot run (400 `TENSOR_EMPTY_DIMENSION`), and no answer that the declared output
 * shapes already make larger than `maxAnswerElements` (422 `ANSWER_TOO_LARGE`, the code the same answer gets
 * after a run). Each request is judged alone, so one caller's refusal never fails a batch it would have joined.
 */
export function admitRun(
  model: string,
  signature: ModelSignature,
  inputs: NamedTensors,
  limits: RequestLimits,
): void {
  checkEmptyDimensions(model, signature, inputs);
  checkDeclaredAnswerSize(declaredAnswerElements(signature, inputs), limits);
}
