// Drive an http.Server's request listener over in-memory duplex sockets: JS cost per request, no kernel.
import { createServer, type Server } from 'node:http';
import { Duplex } from 'node:stream';
import Fastify from 'fastify';
import { JSON as J, Service, createApp } from '@tiffin/core';

const body = JSON.stringify({ id: 42, name: 'iris sample', features: [5.1, 3.5, 1.4, 0.2], tags: ['a', 'b', 'c'], meta: { source: 'bench', ok: true } });
const REQ = Buffer.from(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

class Pipe extends Duplex {
  onResponse: (() => void) | null = null;
  _read() {}
  _write(chunk: Buffer, _e: string, cb: () => void) { this.got(chunk); cb(); }
  _writev(chunks: Array<{ chunk: Buffer }>, cb: () => void) { for (const c of chunks) this.got(c.chunk); cb(); }
  private got(chunk: Buffer) { if (chunk.includes('\r\n\r\n') || chunk.length > 0) { const f = this.onResponse; if (f && chunk.length > 0 && !chunk.toString('latin1').startsWith('HTTP/1.1') ) { this.onResponse = null; setImmediate(f); } else if (f && chunk.toString('latin1').startsWith('HTTP/1.1') && !chunk.toString('latin1').endsWith('\r\n\r\n')) { this.onResponse = null; setImmediate(f); } } }
}

async function drive(server: Server, n: number, conns = 8): Promise<number> {
  const pipes: Pipe[] = [];
  for (let i = 0; i < conns; i++) { const p = new Pipe(); (p as any).remoteAddress = '127.0.0.1'; server.emit('connection', p); pipes.push(p); }
  let left = n;
  const c0 = process.cpuUsage();
  await Promise.all(pipes.map((p) => new Promise<void>((resolve) => {
    const next = () => { if (left-- <= 0) return resolve(); p.onResponse = next; p.push(REQ); };
    next();
  })));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

const kind = process.argv[2]!;
let server: Server;
if (kind === 'node') {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = Buffer.from(JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8'))), 'utf8');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length });
      res.end(out);
    });
  });
} else if (kind === 'fastify') {
  let s!: Server;
  const app = Fastify({ serverFactory: (h) => { s = createServer(h); return s; } });
  app.post('/echo', async (r) => r.body);
  await app.ready();
  server = s;
} else {
  const svc = new Service('e');
  svc.api({ input: new J(), output: new J() }, function echo(x) { return x; });
  const app = createApp(svc, { logger: kind === 'tiffin-log' ? undefined : false, maxConcurrency: 1e6 });
  await app.lifecycle.startup?.();
  server = createServer(app.requestListener());
}
await drive(server, 20000);
const r: number[] = [];
for (let i = 0; i < 5; i++) r.push(await drive(server, 20000));
r.sort((a, b) => a - b);
console.log(kind, 'cpu us/req median', r[2]!.toFixed(1), 'min', r[0]!.toFixed(1), 'max', r[4]!.toFixed(1));
process.exit(0);
