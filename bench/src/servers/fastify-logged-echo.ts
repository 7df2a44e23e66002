/**
 * Child process: Fastify 5 doing the echo's work *and* `tiffin serve`'s logging work: its own pino logger on
 * stdout (`logger: true`, Fastify's default destination) writing one access line per request with the fields of
 * Tiffin's line (request id, method, path, status, content types and length, milliseconds). Fastify's built-in
 * request logging writes two lines per request; `OneAccessLine` (fastify-access-line.ts) keeps one.
 */
import Fastify from 'fastify';
import { OneAccessLine } from './fastify-access-line.js';

const app = Fastify({ logger: true, logController: new OneAccessLine() });
app.post('/echo', async (request) => request.body);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
