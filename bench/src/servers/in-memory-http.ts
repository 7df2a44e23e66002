/**
 * Child process of the JS-cost bench: one JSON echo server (`node`, `fastify`, `fastify-log` (one access line a request), `tiffin`, `tiffin-log`, and
 * `tiffin-router`: a `@koa/router` mounted in front of the API) driven over in-memory sockets (Duplex streams
 * given to the http.Server as connections), so the figure is the JavaScript work per request (HTTP parsing,
 * framework, JSON, response writing) without the kernel's TCP work or a load generator competing for the CPU.
 * `BENCH_CORE` names another build of `@tiffin/core` (its dist/index.js) for the Tiffin kinds. Prints
 * `{"cpuUs": <CPU µs per request>}`.
 */
import type { Server } from 'node:http';
import { Duplex } from 'node:stream';
import { ECHO_PAYLOAD } from '../echo-payload.js';
import { type EchoKind, echoServer } from './echo-servers.js';

const REQUEST = Buffer.from(
  `POST /echo HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(ECHO_PAYLOAD)}\r\n\r\n${ECHO_PAYLOAD}`,
);
const CONNECTIONS = 8;

/** One keep-alive connection: sends the next request once the previous response's last byte arrived. */
class MemorySocket extends Duplex {
  private waiting: (() => void) | null = null;
  private expected = -1;
  private received = 0;
  readonly remoteAddress = '127.0.0.1';

  send(onResponse: () => void): void {
    this.waiting = onResponse;
    this.expected = -1;
    this.received = 0;
    this.push(REQUEST);
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.collect(chunk);
    done();
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, done: () => void): void {
    for (const { chunk } of chunks) this.collect(chunk);
    done();
  }

  /** Counts response bytes: the head's end and its Content-Length say when the response is complete. */
  private collect(chunk: Buffer): void {
    this.received += chunk.length;
    if (this.expected < 0) {
      const text = chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) throw new Error('response head split across writes');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
      if (!length) throw new Error('response without content-length');
      this.expected = end + 4 + Number(length[1]);
    }
    if (this.received >= this.expected && this.waiting) {
      const next = this.waiting;
      this.waiting = null;
      setImmediate(next);
    }
  }
}

async function drive(server: Server, requests: number): Promise<number> {
  const sockets = Array.from({ length: CONNECTIONS }, () => {
    const socket = new MemorySocket();
    server.emit('connection', socket);
    return socket;
  });
  let left = requests;
  const before = process.cpuUsage();
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          const next = () => (left-- > 0 ? socket.send(next) : resolve());
          next();
        }),
    ),
  );
  const used = process.cpuUsage(before);
  for (const socket of sockets) socket.destroy();
  return (used.user + used.system) / requests;
}

const kind = (process.argv[2] ?? 'node') as EchoKind;
const requests = Number(process.argv[3] ?? 20_000);
const server = await echoServer(kind);
await drive(server, requests); // warm-up: JIT, pools
const cpuUs = await drive(server, requests);
process.stderr.write(`${JSON.stringify({ cpuUs })}\n`);
process.exit(0);
