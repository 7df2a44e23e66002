/** Why a call failed, as a client sees it. */
export type ClientErrorKind = 'http' | 'timeout' | 'network' | 'usage' | 'protocol';

const BRAND = Symbol.for('tiffin.client.error');

/**
 * Every error the client throws. `kind` says what failed; for `http` the server's answer is kept:
 * `status`, and from its `{"error", "type", "code"}` body `type`, `code` and the message.
 * Recognised across copies of this package with `isTiffinClientError` (a `Symbol.for` brand).
 */
export class TiffinClientError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'TiffinClientError';

  constructor(
    message: string,
    readonly kind: ClientErrorKind,
    /** HTTP status for `http` errors; 0 otherwise. */
    readonly status = 0,
    /** The server's error class name (e.g. `BadInput`), when it sent one. */
    readonly type: string | undefined = undefined,
    /** The server's stable error code (e.g. `BAD_INPUT`), when it sent one. */
    readonly code: string | undefined = undefined,
    options?: { cause?: unknown; detail?: unknown },
  ) {
    super(message, options);
    this.detail = options?.detail;
  }

  /** The server's structured `detail` (e.g. validation issues), when it sent one. */
  readonly detail: unknown;
}

export function isTiffinClientError(value: unknown): value is TiffinClientError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** The error for a non-2xx answer, from the server's JSON error body when it has one. */
export async function errorFromResponse(res: Response, what: string): Promise<TiffinClientError> {
  const text = await res.text().catch(() => '');
  let message = text.trim() || res.statusText || `HTTP ${res.status}`;
  let type: string | undefined;
  let code: string | undefined;
  let detail: unknown;
  try {
    const body = JSON.parse(text) as { error?: unknown; type?: unknown; code?: unknown; detail?: unknown };
    if (typeof body.error === 'string') message = body.error;
    if (typeof body.type === 'string') type = body.type;
    if (typeof body.code === 'string') code = body.code;
    detail = body.detail;
  } catch {
    // Not JSON (a proxy's page, say): the text is the message.
  }
  return new TiffinClientError(`${what}: ${res.status} ${message}`, 'http', res.status, type, code, {
    detail,
  });
}
