import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Who sent a request, for the routes that act on "the caller's own" jobs (A1111's `/progress`, `/interrupt`,
 * `/skip`): its client address as the server's socket sees it, and the credentials it sent, if any (its
 * `Authorization` header, kept as a digest). The service's API token is one secret every client that holds it
 * sends, so it tells no two clients apart: the address does. Credentials of their own (an A1111 client's
 * `--api-auth` Basic user and password) tell apart clients behind one address, and cannot be claimed without
 * knowing them.
 */
export function callerOf(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '';
  const authorization = req.headers.authorization;
  if (!authorization) return address;
  return `${address} ${createHash('sha256').update(authorization).digest('base64url')}`;
}
