/** Child process: Fastify 5 doing the echo's work (parse the JSON body, send it back as JSON); default options. */
import Fastify from 'fastify';

const app = Fastify();
app.post('/echo', async (request) => request.body);
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
