/**
 * Child process: Fastify 5 doing the echo's work *and* `tiffin serve`'s logging work: its own pino logger on
 * stdout (`logger: true`, Fastify's default destination) writing one access line per request with the fields of
 * Tiffin's line (request id, method, path, status, content types and length, milliseconds). Fastify's built-in
 * request logging writes two lines per request ("incoming request", "request completed"); a `LogController`
 * keeps only the second, with Tiffin's fields, so both servers write the same number of lines.
 */
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

class OneAccessLine extends LogController {
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

const app = Fastify({ logger: true, logController: new OneAccessLine() });
app.post('/echo', async (request) => request.body);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
