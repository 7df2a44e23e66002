/**
 * The JSON echo servers the benchmarks compare, one per kind: `node` (node:http alone), `fastify`, `fastify-log` (its
 * pino logger writing one access line a request), `koa`, `tiffin` (quiet), `tiffin-log` (the default access log) and
 * `tiffin-router` (a `@koa/router` mounted in front of the API). `BENCH_CORE` names another build of `@tiffin/core`
 * (its dist/index.js) for the Tiffin kinds.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import Fastify from 'fastify';
import Koa from 'koa';
import { mountBenchRouter } from './bench-router.js';
import { OneAccessLine } from './fastify-access-line.js';

export type EchoKind = 'node' | 'fastify' | 'fastify-log' | 'koa' | 'tiffin' | 'tiffin-log' | 'tiffin-router';

export async function echoServer(kind: EchoKind): Promise<Server> {
  if (kind === 'koa') {
    const app = new Koa();
    app.use(async (ctx) => {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      ctx.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    });
    return createServer(app.callback() as (req: IncomingMessage, res: ServerResponse) => void);
  }
  if (kind === 'node') {
    return createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.from(JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8'))), 'utf8');
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      });
    });
  }
  if (kind === 'fastify' || kind === 'fastify-log') {
    let server: Server | undefined;
    // `fastify-log`: its pino logger on stdout writing one access line a request, the work of Tiffin's default log.
    const logging = kind === 'fastify-log' ? { logger: true, logController: new OneAccessLine() } : {};
    const app = Fastify({
      ...logging,
      serverFactory: (handler) => {
        server = createServer(handler);
        return server;
      },
    });
    app.post('/echo', async (request) => request.body);
    await app.ready();
    return server!;
  }
  // Before the server is made, as `tiffin serve` does: `BENCH_TRACING=sampled|unsampled` (bench-tracing.ts).
  if (process.env.BENCH_TRACING)
    await (await import('./bench-tracing.js')).startBenchTracing(process.env.BENCH_TRACING);
  const core = (await import(process.env.BENCH_CORE ?? '@tiffin/core')) as typeof import('@tiffin/core');
  const { createApp, JSON: JSONDescriptor, Service } = core;
  const svc = new Service('bench_echo');
  svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(input) {
    return input;
  });
  if (kind === 'tiffin-router') mountBenchRouter(svc);
  // `tiffin-log`: the default logger (access log on stdout, which the bench reads and drops).
  const app = createApp(svc, {
    logger: kind === 'tiffin-log' ? undefined : false,
    maxConcurrency: 1_000_000,
    // `BENCH_SERVER_TIMING=0`: no `Server-Timing` header (an older build given by BENCH_CORE ignores the option).
    ...(process.env.BENCH_SERVER_TIMING === '0' ? { serverTiming: false } : {}),
  });
  await app.lifecycle.startup();
  return createServer(app.requestListener());
}
