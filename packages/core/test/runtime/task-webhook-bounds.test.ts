import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { JSONDescriptor, MemoryLogger, Service } from '../../src/index.js';
import { TaskWebhooks, type WebhookOptions } from '../../src/runtime/task-webhook.js';
import { sleep, start } from '../server/helpers.js';

/**
 * Task webhooks against receivers that hold what they are sent: however many tasks end, the server keeps at most
 * `maxPerHost` deliveries open to one host and `maxInFlight` in all (retries included), holds a bounded number
 * more, and calls only the paths an allowed entry names (docs/tasks.md, Webhooks).
 */

/** A real receiver on loopback: counts the sockets it accepted and those open at once, and what arrived. */
class Receiver {
  readonly server: Server;
  open = 0;
  maxOpen = 0;
  accepted = 0;
  /** Requests being held (arrived, not answered) now, and the most at once. */
  held = 0;
  maxHeld = 0;
  requests = 0;
  readonly paths: string[] = [];

  /** `answer`: what to do with a request (by default nothing: it is held until the socket closes). */
  constructor(answer?: (req: IncomingMessage, res: ServerResponse) => void) {
    this.server = createServer((req, res) => {
      this.requests++;
      this.paths.push(req.url ?? '');
      this.held++;
      this.maxHeld = Math.max(this.maxHeld, this.held);
      let done = false;
      const end = () => {
        if (done) return;
        done = true;
        this.held--;
      };
      res.on('finish', end);
      res.on('close', end);
      req.resume();
      answer?.(req, res);
    });
    this.server.on('connection', (socket) => {
      this.accepted++;
      this.open++;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      socket.on('close', () => this.open--);
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const secret = `whsec_${randomBytes(24).toString('base64')}`;

function echoService(): Service {
  return new Service('hooks').api(
    { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
    async (input) => input,
  );
}

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server whose tasks tell webhooks as `webhooks` says; `submit(hook)` answers the submit's status and id. */
async function serverWith(webhooks: Omit<WebhookOptions, 'secret'>) {
  const handle = await start(echoService(), { webhooks: { secret, ...webhooks } });
  closers.push(() => handle.close());
  const submit = async (hook: string): Promise<{ status: number; id?: string; code?: string }> => {
    const answer = await fetch(`${handle.url}/echo/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tiffin-webhook-url': hook },
      body: '{"n":1}',
    });
    return { status: answer.status, ...((await answer.json()) as { id?: string; code?: string }) };
  };
  /** Resolves once every task in `ids` has ended. */
  const ended = async (ids: string[]) => {
    for (const id of ids) {
      for (let k = 0; k < 2000; k++) {
        const view = (await (await fetch(`${handle.url}/echo/status?id=${id}`)).json()) as { status: string };
        if (view.status !== 'queued' && view.status !== 'running') break;
        await sleep(10);
      }
    }
  };
  return { handle, submit, ended };
}

async function receiver(answer?: (req: IncomingMessage, res: ServerResponse) => void) {
  const r = new Receiver(answer);
  const port = await r.listen();
  closers.push(() => r.close());
  return { r, port };
}

/** Waits until `done()` holds (at most ~5 s), then a little longer: time for one too many to arrive, were it sent. */
async function settle(done: () => boolean): Promise<void> {
  for (let k = 0; k < 500 && !done(); k++) await sleep(10);
  await sleep(300);
}

describe('task webhooks: deliveries in flight are bounded', () => {
  it('100 tasks naming a receiver that never answers open at most 4 connections to it (the per-host default)', async () => {
    const { r, port } = await receiver();
    const { submit, ended } = await serverWith({ allow: [`127.0.0.1:${port}`], timeoutMs: 60_000 });
    const ids: string[] = [];
    for (let k = 0; k < 100; k++) {
      const answer = await submit(`http://127.0.0.1:${port}/hook`);
      expect(answer.status).toBe(202);
      ids.push(answer.id as string);
    }
    await ended(ids);
    await settle(() => r.accepted >= 4);
    expect(r.maxOpen).toBe(4);
    expect(r.accepted).toBe(4);
  });

  it('many hosts together get at most maxInFlight connections, each at most maxPerHost', async () => {
    const receivers = await Promise.all([0, 1, 2, 3, 4].map(() => receiver()));
    const { submit, ended } = await serverWith({
      allow: receivers.map(({ port }) => `127.0.0.1:${port}`),
      timeoutMs: 60_000,
      maxInFlight: 6,
      maxPerHost: 2,
    });
    const ids: string[] = [];
    for (let k = 0; k < 50; k++) {
      const { port } = receivers[k % receivers.length] as { port: number };
      ids.push((await submit(`http://127.0.0.1:${port}/hook`)).id as string);
    }
    await ended(ids);
    const total = () => receivers.reduce((sum, { r }) => sum + r.accepted, 0);
    await settle(() => total() >= 6);
    expect(total()).toBe(6);
    for (const { r } of receivers) expect(r.maxOpen).toBeLessThanOrEqual(2);
  });

  it('retries count against the bounds too', async () => {
    // Every delivery is answered 500 after a while, so each task's webhook is tried `attempts` times.
    const { r, port } = await receiver((_req, res) => {
      setTimeout(() => res.writeHead(500).end(), 30);
    });
    const { submit, ended } = await serverWith({
      allow: [`127.0.0.1:${port}`],
      attempts: 3,
      retryMs: 1,
      maxPerHost: 2,
    });
    const ids: string[] = [];
    for (let k = 0; k < 20; k++) ids.push((await submit(`http://127.0.0.1:${port}/hook`)).id as string);
    await ended(ids);
    await settle(() => r.requests >= 60);
    expect(r.requests).toBe(60);
    expect(r.maxHeld).toBe(2);
  });

  it('holds at most maxQueued deliveries beyond those in flight, dropping newer ones with a warn line', async () => {
    const { r, port } = await receiver();
    const { handle, submit, ended } = await serverWith({
      allow: [`127.0.0.1:${port}`],
      timeoutMs: 60_000,
      maxQueued: 10,
    });
    const ids: string[] = [];
    for (let k = 0; k < 100; k++) ids.push((await submit(`http://127.0.0.1:${port}/hook`)).id as string);
    await ended(ids);
    await settle(() => r.accepted >= 4);
    const dropped = handle.logs.records.filter((record) => record.msg === 'task webhook dropped');
    expect(dropped).toHaveLength(100 - 4 - 10);
    expect(dropped[0]).toMatchObject({ level: 'warn' });
    expect(r.accepted).toBe(4);
  });
});

describe('task webhooks: an allowed entry may name the paths a webhook may take', () => {
  it('refuses 400 WEBHOOK_URL_REFUSED a path or query outside the allowed prefix; host-only entries allow any', async () => {
    const { r, port } = await receiver((_req, res) => res.writeHead(204).end());
    const other = await receiver((_req, res) => res.writeHead(204).end());
    const { submit, ended } = await serverWith({
      allow: [
        `127.0.0.1:${port}/tiffin/`,
        `127.0.0.1:${port}/exact`,
        `127.0.0.1:${port}/q/?`,
        `127.0.0.1:${other.port}`,
      ],
    });
    const base = `http://127.0.0.1:${port}`;
    for (const refused of [
      `${base}/`,
      `${base}/other`,
      `${base}/tiffin`,
      `${base}/tiffinx/hook`,
      `${base}/tiffin/../admin`,
      `${base}/tiffin/%2e%2e/admin`,
      `${base}/tiffin/a%2Fb`,
      `${base}/tiffin/a%5Cb`,
      `${base}/tiffin/..;/admin`,
      `${base}/tiffin/hook?to=elsewhere`,
      `${base}/exactly`,
      `${base}/q`,
    ]) {
      const answer = await submit(refused);
      expect(answer.status, refused).toBe(400);
      expect(answer.code, refused).toBe('WEBHOOK_URL_REFUSED');
    }
    const accepted = [
      `${base}/tiffin/hook`,
      `${base}/tiffin/a/b`,
      `${base}/exact`,
      `${base}/exact/sub`,
      `${base}/q/x?a=1`,
      `http://127.0.0.1:${other.port}/any/path?and=query`,
    ];
    const ids: string[] = [];
    for (const hook of accepted) {
      const answer = await submit(hook);
      expect(answer.status, hook).toBe(202);
      ids.push(answer.id as string);
    }
    await ended(ids);
    await settle(() => r.requests + other.r.requests >= accepted.length);
    expect([...r.paths, ...other.r.paths].sort()).toEqual(
      ['/tiffin/hook', '/tiffin/a/b', '/exact', '/exact/sub', '/q/x?a=1', '/any/path?and=query'].sort(),
    );
  });

  it('refuses at start an allowed entry it cannot read as host[:port][/path][?]', () => {
    for (const entry of [
      'hooks.example.com/a?b=1',
      'hooks.example.com#x',
      'user@hooks.example.com',
      'hooks.example.com/a%2Fb',
      'hooks.example.com/a/../b',
      'http://hooks.example.com',
      '',
    ]) {
      expect(() => new TaskWebhooks({ allow: [entry], secret }, new MemoryLogger()), entry).toThrow(
        /--webhook-allow/,
      );
    }
  });
});
