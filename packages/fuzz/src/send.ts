import { connect } from 'node:net';
import type { FuzzRequest } from './requests.js';

/** What came back: an HTTP status, the connection closed without one, or nothing within the time limit. */
export type Outcome = number | 'closed' | 'hang';

export interface Sent {
  outcome: Outcome;
  ms: number;
}

/** The request as bytes: one request per connection (`Connection: close`), framed as `req.framing` says. */
export function encodeRequest(req: FuzzRequest, host: string): Buffer {
  const { body } = req.payload;
  const lines = [`${req.method} ${req.path} HTTP/1.1`, `Host: ${host}`, 'Connection: close'];
  if (req.payload.contentType !== null) lines.push(`Content-Type: ${req.payload.contentType}`);
  for (const [k, v] of req.headers) lines.push(`${k}: ${v}`);
  let payload = body;
  switch (req.framing) {
    case 'length':
      if (req.method !== 'GET' && req.method !== 'HEAD') lines.push(`Content-Length: ${body.length}`);
      break;
    case 'short-body':
      // Declares more than it sends, then the client finishes writing.
      lines.push(`Content-Length: ${body.length + 100}`);
      break;
    case 'long-body':
      // Declares less than it sends: the rest reads as a (garbage) next request.
      lines.push(`Content-Length: ${Math.floor(body.length / 2)}`);
      break;
    case 'double-length':
      lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`);
      break;
    case 'chunked':
    case 'bad-chunked': {
      lines.push('Transfer-Encoding: chunked');
      const chunks: Buffer[] = [];
      for (let i = 0; i < body.length; i += 1000) {
        const piece = body.subarray(i, i + 1000);
        const size = req.framing === 'bad-chunked' && i === 0 ? 'zz' : piece.length.toString(16);
        chunks.push(Buffer.from(`${size}\r\n`), piece, Buffer.from('\r\n'));
      }
      chunks.push(Buffer.from(req.framing === 'bad-chunked' ? '0\r\n' : '0\r\n\r\n'));
      payload = Buffer.concat(chunks);
      break;
    }
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

/** Send raw bytes to host:port and read the status line of the answer. */
export function send(port: number, bytes: Buffer, limitMs: number): Promise<Sent> {
  const started = performance.now();
  return new Promise((resolve) => {
    let head = '';
    let done = false;
    const socket = connect(port, '127.0.0.1');
    const finish = (outcome: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ outcome, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish('hang'), limitMs);
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      if (match) finish(Number(match[1]));
      else if (head.length > 12) finish('closed');
    });
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.write(bytes, () => socket.end());
  });
}
