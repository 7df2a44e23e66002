import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * HTTP Basic credentials (RFC 7617) checked against a list of `user:pass`, as AUTOMATIC1111's `--api-auth` takes
 * them: the presented pair is compared with every listed one in constant time (SHA-256 digests, each compared,
 * none skipped), so neither a user's name nor a password's length or prefix shows in the timing. A header that is
 * malformed, huge, not base64 or without a colon simply matches none.
 */

/** Longest `Authorization` value decoded: far above any real pair, and no allocation past it. */
const MAX_AUTHORIZATION = 4096;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function digest(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}

/** The decoded `user:pass` bytes of a `Basic <base64>` value (scheme case-insensitive), else null. */
function basicCredentials(authorization: string): Buffer | null {
  if (authorization.length > MAX_AUTHORIZATION) return null;
  const space = authorization.indexOf(' ');
  if (space < 0 || authorization.slice(0, space).toLowerCase() !== 'basic') return null;
  const encoded = authorization.slice(space + 1).trim();
  if (encoded.length === 0 || encoded.length % 4 !== 0 || !BASE64.test(encoded)) return null;
  const decoded = Buffer.from(encoded, 'base64');
  return decoded.includes(0x3a) ? decoded : null;
}

/** Whether a request's `Authorization` value carries one of `credentials` (each `user:pass`, UTF-8). */
export function basicAuth(
  credentials: readonly string[],
): (authorization: string | null | undefined) => boolean {
  const expected = credentials.map((pair) => digest(Buffer.from(pair, 'utf8')));
  return (authorization) => {
    if (!authorization) return false;
    const presented = basicCredentials(authorization);
    if (presented === null) return false;
    const seen = digest(presented);
    let match = false;
    // Every listed pair is compared, a match or not: the time does not tell which one matched.
    for (const want of expected) match = timingSafeEqual(seen, want) || match;
    return match;
  };
}

/** The challenge a 401 of a Basic group carries (RFC 7617 §2, its charset parameter §2.1). */
export const BASIC_CHALLENGE = 'Basic realm="tiffin", charset="UTF-8"';
