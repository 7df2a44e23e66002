import { request } from 'node:http';
import { MemoryLogger, type ServeOptions, type ServerHandle, serve } from '@tiffin/core';
import {
  createDiffusionService,
  type DiffusionService,
  type DiffusionServiceOptions,
} from '../../src/service/diffusion-service.js';
import type { ProgressEvent } from '../../src/service/progress.js';
import { tinyDir } from '../helpers/tiny.js';

/** The tiny SD 1.x service (`options` added) served on 127.0.0.1, quiet, on a free port. */
export async function serveTiny(
  options: Partial<DiffusionServiceOptions> = {},
  serveOptions: ServeOptions = {},
): Promise<ServerHandle> {
  const sd = createDiffusionService({
    modelDir: tinyDir('sd1'),
    backend: 'wasm',
    logger: new MemoryLogger(),
    ...options,
  });
  return serve(sd.service, {
    port: 0,
    host: '127.0.0.1',
    logger: false,
    handleSignals: false,
    ...serveOptions,
  });
}

/** A JSON answer: its status and parsed body. */
export interface JsonAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

/**
 * One HTTP call to `server` sent from the loopback address `from` (`127.0.0.1`, `127.0.0.2`, …: every 127/8 address
 * is this machine), so the server sees two clients as two addresses. A fresh connection each time (`agent: false`).
 */
export function callFrom<T = Record<string, unknown>>(
  server: ServerHandle,
  from: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method,
        localAddress: from,
        agent: false,
        headers: payload
          ? { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) }
          : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as T });
          } catch {
            reject(new Error(`${method} ${path}: ${res.statusCode} answered no JSON: ${text.slice(0, 200)}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A recorded progress event with the time it was seen. */
export type SeenEvent = ProgressEvent & { at: number };

/** Every progress event of `service` from now on, in order, with the time it was seen. */
export function recordProgress(service: DiffusionService): { events: SeenEvent[]; stop: () => void } {
  const controller = new AbortController();
  const events: SeenEvent[] = [];
  (async () => {
    for await (const e of service.progress.events(controller.signal))
      events.push({ ...e, at: performance.now() });
  })();
  return { events, stop: () => controller.abort() };
}

/** When the server finishes writing the answer to the next request it gets (its 504, say). */
export function nextAnswerSent(server: ServerHandle): Promise<number> {
  return new Promise((resolve) => {
    const onRequest = (_req: unknown, res: import('node:http').ServerResponse) => {
      server.server.off('request', onRequest);
      res.once('finish', () => resolve(performance.now()));
    };
    server.server.on('request', onRequest);
  });
}

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}
