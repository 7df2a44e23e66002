import { createClient } from '@tiffin/client';
import { type Service, serve, silentLogger } from '@tiffin/core';

/**
 * Serves `svc` in this process on a free port (as `npm start` does, without its signal handling and logs) and
 * makes a client typed from it: a test then calls the service over HTTP, as any caller would.
 */
export async function serveInProcess<S extends Service>(svc: S) {
  const server = await serve(svc, { port: 0, handleSignals: false, logger: silentLogger });
  return { client: createClient<S>({ baseUrl: server.url }), close: () => server.close() };
}
