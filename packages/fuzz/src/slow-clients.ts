import { connect as connectHttp2 } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { Finding } from './run.js';
import type { Target } from './target.js';

/**
 * Clients that hold the server instead of sending it bad bytes: one that asks for a large answer and does not
 * read it, one that sends its body in slow pieces (or stops part-way), one that sends part of a gRPC message,
 * and one that opens a task's event stream and never reads it. Each holds for a while and leaves; the server
 * must answer them with nothing worse than a 4xx (or cut them off) and keep answering everyone else.
 */
export type SlowShape = 'slow/read' | 'slow/body' | 'slow/grpc-partial' | 'slow/unread-stream';

export interface SlowCase {
  shape: SlowShape;
  /** Bytes of the body, answer or message. */
  bytes: number;
  /** Pieces a slow body is sent in, and the pause between two. */
  pieces: number;
  pauseMs: number;
  /** Whether a slow body or a gRPC message stops before its end. */
  stopsShort: boolean;
  /** How long the client holds before it leaves. */
  holdMs: number;
}

export const slowCase: fc.Arbitrary<SlowCase> = fc.record({
  shape: fc.constantFrom<SlowShape>('slow/read', 'slow/body', 'slow/grpc-partial', 'slow/unread-stream'),
  bytes: fc.integer({ min: 1, max: 1 << 20 }),
  pieces: fc.integer({ min: 1, max: 8 }),
  pauseMs: fc.integer({ min: 0, max: 300 }),
  stopsShort: fc.boolean(),
  holdMs: fc.integer({ min: 50, max: 2000 }),
});

/** What the client saw: an HTTP status, a gRPC status, `closed` (the server cut it off) or `left` (it left first). */
export type SlowOutcome = string;

/** The status of the answer `socket` received so far, if its head arrived. */
function statusOf(head: string): number | undefined {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  return match ? Number(match[1]) : undefined;
}

/** A raw connection whose bytes are kept (while `reading`) for the status line. */
function rawConnection(port: number): { socket: Socket; head: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let head = '';
  socket.on('data', (chunk: Buffer) => {
    if (head.length < 64) head += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, head: () => head, closed };
}

/** Hold for `ms`, or less when the server closes the connection first. */
async function hold(ms: number, closed: Promise<void>): Promise<boolean> {
  const done = await Promise.race([sleep(ms).then(() => false), closed.then(() => true)]);
  return done;
}

async function slowRead(port: number, c: SlowCase): Promise<SlowOutcome> {
  const body = 'r'.repeat(c.bytes);
  // The text API echoes its body: an answer as large as the request, which this client does not read.
  return unreadAnswer(
    port,
    `POST /text HTTP/1.1\r\nHost: fuzz\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    c.holdMs,
  );
}

/** Sends `request` on a connection of its own, then reads nothing of the answer for `holdMs` (or until cut). */
async function unreadAnswer(port: number, request: string, holdMs: number): Promise<SlowOutcome> {
  const { socket, head, closed } = rawConnection(port);
  socket.write(request);
  socket.pause();
  const cut = await hold(holdMs, closed);
  socket.resume();
  await sleep(20);
  socket.destroy();
  return String(statusOf(head()) ?? (cut ? 'closed' : 'left'));
}

async function slowBody(port: number, c: SlowCase): Promise<SlowOutcome> {
  const { socket, head, closed } = rawConnection(port);
  socket.write(
    `POST /text HTTP/1.1\r\nHost: fuzz\r\nContent-Type: text/plain\r\nContent-Length: ${c.bytes}\r\n\r\n`,
  );
  const sent = c.stopsShort ? Math.floor(c.bytes / 2) : c.bytes;
  const piece = Math.max(1, Math.ceil(sent / c.pieces));
  let cut = false;
  for (let at = 0; at < sent && !cut; at += piece) {
    socket.write('b'.repeat(Math.min(piece, sent - at)));
    cut = await hold(c.pauseMs, closed);
  }
  if (!cut) cut = await hold(c.holdMs, closed);
  socket.destroy();
  return String(statusOf(head()) ?? (cut ? 'closed' : 'left'));
}

async function grpcPartial(address: string, c: SlowCase): Promise<SlowOutcome> {
  const session = connectHttp2(`http://${address}`);
  session.on('error', () => {});
  const stream = session.request({
    ':method': 'POST',
    ':path': '/bentoml.grpc.v1.BentoService/Call',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => {});
  let status = '';
  stream.on('response', (headers) => {
    status = String(headers['grpc-status'] ?? status);
  });
  stream.on('trailers', (trailers) => {
    status = String(trailers['grpc-status'] ?? status);
  });
  stream.resume();
  const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(c.bytes, 1);
  stream.write(prefix);
  // All but the last byte, or half: a message that never completes.
  stream.write(Buffer.alloc(c.stopsShort ? Math.floor(c.bytes / 2) : c.bytes - 1, 0x0a));
  const cut = await hold(c.holdMs, closed);
  stream.close();
  session.close();
  return status ? `grpc ${status}` : cut ? 'closed' : 'left';
}

async function unreadStream(port: number, c: SlowCase): Promise<SlowOutcome> {
  const submitted = await fetch(`http://127.0.0.1:${port}/json/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pad: 'e'.repeat(Math.min(c.bytes, 4096)) }),
  });
  if (submitted.status !== 202) return String(submitted.status);
  const { id } = (await submitted.json()) as { id: string };
  return unreadAnswer(
    port,
    `GET /json/events?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: fuzz\r\n\r\n`,
    c.holdMs,
  );
}

export function runSlowCase(target: Target, c: SlowCase): Promise<SlowOutcome> {
  switch (c.shape) {
    case 'slow/read':
      return slowRead(target.httpPort, c);
    case 'slow/body':
      return slowBody(target.httpPort, c);
    case 'slow/grpc-partial':
      return grpcPartial(target.grpcAddress, c);
    case 'slow/unread-stream':
      return unreadStream(target.httpPort, c);
  }
}

/** A slow client's answer that points at the server: a 5xx, or a gRPC INTERNAL (13) or UNKNOWN (2). */
export function isSlowFailure(outcome: SlowOutcome): boolean {
  if (outcome === 'grpc 13' || outcome === 'grpc 2') return true;
  const status = Number(outcome);
  return Number.isInteger(status) && status >= 500;
}

export interface SlowReport {
  sent: number;
  outcomes: Record<string, number>;
  kinds: Record<string, number>;
  findings: Finding[];
}

/** Run `cases` seeded slow clients, `concurrency` at a time. */
export async function slowClients(
  target: Target,
  options: { cases: number; seed: number; concurrency?: number },
): Promise<SlowReport> {
  const report: SlowReport = { sent: 0, outcomes: {}, kinds: {}, findings: [] };
  const cases = fc.sample(slowCase, { seed: options.seed, numRuns: options.cases });
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!;
      const outcome = await runSlowCase(target, c);
      report.sent++;
      report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
      report.kinds[c.shape] = (report.kinds[c.shape] ?? 0) + 1;
      if (isSlowFailure(outcome)) {
        report.findings.push({ what: `seed ${options.seed}: ${JSON.stringify(c)}`, outcome });
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  return report;
}
