import { isTiffinError } from '@tiffin/core';

/** An error answered as A1111's API (FastAPI) writes it: `{error, detail, body, errors}`. */
export class A1111Error extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Any error of an A1111 route as a status and A1111's error body; no internal detail for a 5xx. */
export function a1111ErrorAnswer(err: unknown): { status: number; body: Record<string, string> } {
  const status = err instanceof A1111Error ? err.status : isTiffinError(err) ? err.httpStatus : 500;
  const detail =
    status >= 500 && status !== 503 ? 'The server failed to generate the image' : (err as Error).message;
  const error = err instanceof A1111Error ? 'HTTPException' : isTiffinError(err) ? err.code : 'InternalError';
  return { status, body: { error, detail, body: '', errors: '' } };
}
