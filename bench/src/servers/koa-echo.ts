/** Child process: the baseline, a bare Koa route doing the same work (read body, JSON.parse, JSON.stringify). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import getRawBody from 'raw-body';

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/echo') {
    ctx.status = 404;
    return;
  }
  const body = await getRawBody(ctx.req, { limit: 32 * 1024 * 1024 });
  const value: unknown = JSON.parse(body.toString('utf8'));
  ctx.set('content-type', 'application/json');
  ctx.body = Buffer.from(JSON.stringify(value), 'utf8');
});
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
