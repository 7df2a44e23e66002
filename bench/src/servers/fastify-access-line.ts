/**
 * Fastify's request logging cut to `tiffin serve`'s one access line per request, with the fields of Tiffin's line
 * (request id from Fastify's child logger, method, path, status, content types and length, milliseconds).
 * Fastify's built-in request logging writes two lines per request ("incoming request", "request completed");
 * this `LogController` keeps only the second, so both servers write the same number of lines.
 */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

export class OneAccessLine extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    reply.log[error ? 'error' : 'info'](
      {
        method: request.method,
        path: request.url,
        status: reply.statusCode,
        requestType: request.headers['content-type'],
        requestLength: request.headers['content-length'],
        responseType: reply.getHeader('content-type'),
        ms: reply.elapsedTime,
      },
      'request',
    );
  }
}
