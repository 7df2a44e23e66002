import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { encodeErrorBody, errorAnswer } from '../errors/error-answer.js';
import { BadInput, MethodNotAllowed, RequestTimeout, type TiffinError } from '../errors/index.js';
import type { Logger } from '../logging/logger.js';

/** Sent on every response, so a browser never guesses a type for an answer (e.g. JSON echoing a user's HTML). */
export const NOSNIFF: readonly [string, string] = ['x-content-type-options', 'nosniff'];

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/**
 * The one error answer (`errorAnswer`) as bytes, for where the request pipeline cannot give it (a socket no
 * handler saw, a response that failed half-way): the status, the JSON error body, and its headers as a flat
 * name/value list.
 */
export function errorBytes(error: TiffinError): { status: number; body: Buffer; headers: string[] } {
  const answer = errorAnswer(error, '');
  const body = encodeErrorBody(answer.body);
  return {
    status: answer.status,
    body,
    headers: [
      'content-type',
      'application/json',
      'content-length',
      String(body.byteLength),
      NOSNIFF[0],
      NOSNIFF[1],
    ],
  };
}

/** A whole HTTP/1.1 answer with the error body, for sockets that never reached a request handler. */
function rawAnswer(error: TiffinError, extra: string[] = []): string {
  const { status, body, headers } = errorBytes(error);
  const lines = [`HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`];
  for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  return [...lines, 'connection: close', ...extra, '', body.toString()].join('\r\n');
}

/** Node's HTTP parser error codes → what the client is told. */
function parserError(code: string | undefined): TiffinError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new BadInput('Request header fields too large', { errorCode: 431 });
    case 'HPE_INVALID_METHOD':
      return new MethodNotAllowed('Method Not Allowed: the request method is not one this server knows');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeout('Request timeout: the request did not arrive in time');
    default:
      return new BadInput('Bad Request: the request is not valid HTTP/1.1');
  }
}

/**
 * Answers for what Node's server handles before any request listener runs: a request the HTTP parser rejects
 * (malformed, unknown method, oversized headers) and `CONNECT` (which Node hands to a 'connect' listener, or
 * drops the socket without a word when there is none). Both get a 4xx with the JSON error body.
 */
export function answerOutsideRequests(server: Server, logger: Logger): void {
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    logger.log('info', 'request', { method: req.method, path: req.url, status: 405 });
    socket.on('error', () => socket.destroy());
    socket.end(
      rawAnswer(new MethodNotAllowed('Method Not Allowed: CONNECT is not supported'), [
        'allow: GET, HEAD, POST, OPTIONS',
      ]),
    );
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this connection (Node's private field, as its own default handler
    // checks): bytes written now would corrupt it, so the connection just closes.
    const pending = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
      socket.destroy();
      return;
    }
    socket.on('error', () => socket.destroy());
    const answer = parserError(err.code);
    logger.log('info', 'rejected request', { status: answer.httpStatus, reason: err.code ?? err.message });
    socket.end(rawAnswer(answer));
  });
}
