import { isTiffinError } from '@tiffin/core';

/**
 * A compat route's request body, read whole by core's reader for mounted routes (`ctx.state.body`): at most
 * `maxBytes`, a larger declared `content-length` refused before reading, the server's stall timeout and body
 * budget (docs/server.md, your own routes). Its 413 and 400 come back as `tooLarge()` and `unreadable()`, the
 * compat API's own errors; its 408 and 503 are thrown as they are.
 */
export async function requestBody(
  ctx: { state: unknown; set(name: string, value: string): void },
  maxBytes: number,
  errors: { tooLarge: () => Error; unreadable: () => Error },
): Promise<Buffer> {
  try {
    return await (ctx.state as { body(maxBytes: number): Promise<Buffer> }).body(maxBytes);
  } catch (err) {
    if (!isTiffinError(err)) throw err;
    if (err.httpStatus === 413) {
      // The rest of the body is not read: the connection closes rather than have Node drain it.
      ctx.set('connection', 'close');
      throw errors.tooLarge();
    }
    if (err.httpStatus === 400) throw errors.unreadable();
    throw err;
  }
}
