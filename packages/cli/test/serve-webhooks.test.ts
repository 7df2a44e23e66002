import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_DIR, CliProcess } from './cli-process.js';

/** The fixture's task API (slow-tasks.ts: `work`). */
// outside-reads: ignore (a route of the service, not a path on this machine)
const ROUTE = '/work';

const FIXTURE = join(CLI_DIR, 'test', 'fixtures', 'slow-tasks.ts');

/** `tiffin serve` of the fixture on memory tasks, posting webhooks to `allow` signed with `secret`. */
function serveWithWebhooks(allow: string, secret: string, ...more: string[]): CliProcess {
  return new CliProcess([
    'serve',
    FIXTURE,
    '--port',
    '0',
    '--tasks',
    'memory',
    '--webhook-allow',
    allow,
    '--webhook-secret',
    secret,
    ...more,
  ]);
}

/** Submits `input` to the fixture's task API at `url`, asking for a webhook to `hook`. */
function submitWithHook(url: string, hook: string, input: { n: number; ms: number }): Promise<Response> {
  return fetch(`${url}${ROUTE}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'tiffin-webhook-url': hook },
    body: JSON.stringify(input),
  });
}

describe('tiffin serve --webhook-allow', () => {
  const bodies: Array<{ headers: Record<string, string>; body: string }> = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
      res.writeHead(200).end();
    });
  });
  let server: CliProcess | undefined;
  afterAll(async () => {
    server?.kill('SIGKILL');
    await server?.exited;
    receiver.close();
  });

  it('posts a signed webhook to an allowed host when a task ends, and refuses any other host', async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    server = serveWithWebhooks(`127.0.0.1:${port}`, secret);
    const url = await server.readyUrl();
    const submit = (hook: string) => submitWithHook(url, hook, { n: 7, ms: 10 });
    const refused = await submit(`http://127.0.0.1:${port + 1}/hook`);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe('WEBHOOK_URL_REFUSED');
    const accepted = await submit(`http://127.0.0.1:${port}/hook`);
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    for (let k = 0; k < 400 && bodies.length === 0; k++) await new Promise((r) => setTimeout(r, 25));
    expect(bodies).toHaveLength(1);
    const [delivery] = bodies as [{ headers: Record<string, string>; body: string }];
    const payload = new Webhook(secret).verify(delivery.body, delivery.headers);
    expect(payload).toMatchObject({
      type: 'task.succeeded',
      data: { id, status: 'succeeded', result_url: `${ROUTE}/get?id=${id}` },
    });
  });

  it('takes a path allow-list and bounds deliveries in flight (--webhook-max-per-host)', async () => {
    // A receiver that never answers: it counts the connections it accepted and holds them.
    let accepted = 0;
    const holder = createServer(() => {});
    holder.on('connection', () => accepted++);
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const held = serveWithWebhooks(
      `127.0.0.1:${port}/hooks/`,
      `whsec_${randomBytes(24).toString('base64')}`,
      '--webhook-max-per-host',
      '2',
    );
    try {
      const url = await held.readyUrl();
      const submit = (hook: string) => submitWithHook(url, hook, { n: 1, ms: 1 });
      const refused = await submit(`http://127.0.0.1:${port}/other`);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { code: string }).code).toBe('WEBHOOK_URL_REFUSED');
      const ids: string[] = [];
      for (let k = 0; k < 10; k++) {
        const answer = await submit(`http://127.0.0.1:${port}/hooks/done`);
        expect(answer.status).toBe(202);
        ids.push(((await answer.json()) as { id: string }).id);
      }
      for (const id of ids)
        for (let k = 0; k < 400; k++) {
          const view = (await (await fetch(`${url}${ROUTE}/status?id=${id}`)).json()) as { status: string };
          if (view.status === 'succeeded') break;
          await new Promise((r) => setTimeout(r, 25));
        }
      for (let k = 0; k < 400 && accepted < 2; k++) await new Promise((r) => setTimeout(r, 25));
      // Time for a third connection to arrive, were one opened.
      await new Promise((r) => setTimeout(r, 300));
      expect(accepted).toBe(2);
    } finally {
      held.kill('SIGKILL');
      await held.exited;
      holder.closeAllConnections();
      holder.close();
    }
  });
});
