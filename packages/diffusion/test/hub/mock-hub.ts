import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback stand-in for the hub's HTTP API: the tree listing and `resolve` downloads with ranges. */
export interface MockHub {
  url: string;
  /** Requests seen, as `METHOD path range`. */
  log: string[];
  /** Cut the next download of `path` after `bytes` bytes (simulates a dropped connection). */
  interruptNext(path: string, bytes: number): void;
  close(): Promise<void>;
}

export async function startMockHub(
  repo: string,
  files: Record<string, Buffer>,
  token?: string,
): Promise<MockHub> {
  const log: string[] = [];
  const interrupts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    log.push(`${req.method} ${url.pathname} ${req.headers.range ?? ''}`.trim());
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const treePrefix = `/api/models/${repo}/tree/main`;
    if (url.pathname === treePrefix) {
      const entries = Object.entries(files).map(([path, data]) => ({
        type: 'file',
        path,
        size: data.length,
        oid: 'x',
      }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(entries));
      return;
    }
    const resolvePrefix = `/${repo}/resolve/main/`;
    if (url.pathname.startsWith(resolvePrefix)) {
      const path = decodeURIComponent(url.pathname.slice(resolvePrefix.length));
      const data = files[path];
      if (!data) {
        res.writeHead(404, { 'x-error-code': 'EntryNotFound' }).end();
        return;
      }
      const etag = `"${createHash('sha1').update(data).digest('hex')}"`;
      const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      const start = m ? Number(m[1]) : 0;
      const end = m?.[2] ? Number(m[2]) : data.length - 1;
      const body = data.subarray(start, end + 1);
      res.writeHead(m ? 206 : 200, {
        etag,
        'content-length': String(body.length),
        ...(m ? { 'content-range': `bytes ${start}-${end}/${data.length}` } : {}),
      });
      const cut = interrupts.get(path);
      if (cut !== undefined && body.length > 1) {
        interrupts.delete(path);
        res.write(body.subarray(0, cut));
        setTimeout(() => res.destroy(), 20);
        return;
      }
      res.end(body);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    interruptNext: (path, bytes) => interrupts.set(path, bytes),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
