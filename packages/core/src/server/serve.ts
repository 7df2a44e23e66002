import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Service } from '../service/service.js';
import { createApp, type TiffinApp } from './app.js';
import type { ServerOptions } from './options.js';
import { answerOutsideRequests } from './raw-answers.js';
import { installSafetyNet } from './safety-net.js';

export interface ServeOptions extends ServerOptions {
  /**
   * On SIGTERM/SIGINT: stop accepting, fail /readyz, drain, run shutdown hooks, exit 0 (default true).
   * The listeners are removed by `close()`.
   */
  handleSignals?: boolean;
  /**
   * Log and survive errors that escape a request (uncaught exceptions, unhandled rejections) instead of
   * ending the process. Default: the same as `handleSignals` (on when the server owns the process).
   */
  safetyNet?: boolean;
}

/** A running server. */
export interface ServerHandle {
  /** e.g. `http://127.0.0.1:3000` */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly app: TiffinApp;
  /** Stop accepting, drain in-flight requests (up to `drainTimeout`), run shutdown hooks. Idempotent. */
  close(): Promise<void>;
}

/** Listen on host:port and serve `service`; resolves once startup hooks ran and the server is ready. */
export async function serve(service: Service, options: ServeOptions = {}): Promise<ServerHandle> {
  const tiffin = createApp(service, options);
  const { lifecycle, logger } = tiffin;
  const { host, port: wantedPort, drainTimeout, headersTimeout } = tiffin.options;
  const server = createServer(
    {
      // A client that opens a connection and sends its headers slowly (or never) is cut off after
      // `headersTimeout`; Node checks every `connectionsCheckingInterval`, so that is kept short.
      headersTimeout: headersTimeout * 1000,
      connectionsCheckingInterval: Math.min(1000, headersTimeout * 1000),
      // Requests are bounded by our own timeouts (body stalls: `bodyTimeout`, answers: `timeout`); Node's
      // whole-request timeout would cut long uploads short.
      requestTimeout: 0,
    },
    tiffin.requestListener(),
  );
  answerOutsideRequests(server, logger);
  const removeSafetyNet =
    (options.safetyNet ?? options.handleSignals !== false) ? installSafetyNet(logger) : () => {};

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wantedPort, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  const onSignal = (signal: NodeJS.Signals) => {
    // A terminal's Ctrl-C reaches the whole process group, and a package manager in front of us forwards it
    // again: the follow-ups must not kill a server that is draining (the default action once no listener is left).
    if (closing) return;
    logger.log('info', 'shutting down', { signal });
    // Out now: a process manager may follow up with SIGKILL, and the buffered logger would lose the line.
    logger.flush?.();
    close().then(
      () => {
        logger.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        logger.log('error', 'shutdown failed', { error: err instanceof Error ? err.message : String(err) });
        logger.flush?.();
        process.exit(1);
      },
    );
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      lifecycle.beginDrain();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const drained = await lifecycle.waitForIdle(drainTimeout * 1000);
      if (!drained) logger.log('warn', 'drain timeout: closing remaining connections', { drainTimeout });
      server.closeAllConnections();
      await stopped;
      await lifecycle.shutdown();
      removeSafetyNet();
      for (const s of signals) process.off(s, onSignal);
      logger.log('info', 'stopped', { url });
    })();
    return closing;
  };

  if (options.handleSignals !== false) for (const s of signals) process.on(s, onSignal);

  try {
    await lifecycle.startup();
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  logger.log('info', 'ready', {
    url,
    service: service.name,
    // Each API by the route a client calls, not only its name (an API named `iris` may answer at `/predict`).
    apis: Object.fromEntries([...service.apis.values()].map((a) => [a.name, `POST ${a.route}`])),
    pid: process.pid,
    auth: tiffin.options.apiToken ? 'bearer token' : 'none',
  });
  return { url, port, server, app: tiffin, close };
}
