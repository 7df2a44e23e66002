import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';
import { BadInput, JSONDescriptor, Service } from '../../src/index.js';
import { MemoryTaskStore } from '../../src/tasks/memory-task-store.js';
import { sleep, start } from '../server/helpers.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Task webhooks over a listening server, the runner's part, the same whatever the store (run here once, on the
 * memory store; what a store owes webhooks is `describeTaskWebhooks` from `@tiffin/core/testing`, which every
 * store runs): a real HTTP receiver that fails its first delivery (500) and accepts the next; every task's end
 * arrives once, verifies with the shared secret (the Standard Webhooks reference package), and URLs outside
 * `--webhook-allow` are refused at submit.
 */
it('tells the allowed URL once per task, signed and retried after a 500; refuses any other URL', async () => {
  const deliveries: Delivery[] = [];
  let calls = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls++;
      if (calls === 1) return void res.writeHead(500).end();
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const service = new Service('hooks').api(
    { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
    async (input) => {
      if ((input as { fail?: boolean }).fail) throw new BadInput('asked to fail');
      return input;
    },
  );
  service.useTaskStore(new MemoryTaskStore());
  const handle = await start(service, {
    webhooks: { allow: [`127.0.0.1:${port}`], secret, retryMs: 20 },
  });
  const submit = (hook: string, body: unknown) =>
    fetch(`${handle.url}/echo/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tiffin-webhook-url': hook },
      body: JSON.stringify(body),
    });
  try {
    const hook = `http://127.0.0.1:${port}/hook`;
    for (const refused of [
      `http://127.0.0.1:${port + 1}/hook`,
      `http://localhost:${port}/hook`,
      `http://user:pw@127.0.0.1:${port}/hook`,
      `ftp://127.0.0.1:${port}/hook`,
      'file:///etc/passwd',
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://[::1]:${port}/hook`,
      `http://127.0.0.1:${port}@169.254.169.254/`,
      `${hook}?${'x'.repeat(4000)}`,
      'not a url \u00e9',
    ]) {
      const answer = await submit(refused, { n: 1 });
      expect(answer.status, refused).toBe(400);
      expect(((await answer.json()) as { code: string }).code).toBe('WEBHOOK_URL_REFUSED');
    }
    const ok = (await (await submit(hook, { n: 1 })).json()) as { id: string };
    const bad = (await (await submit(hook, { fail: true })).json()) as { id: string };
    for (let k = 0; k < 200 && deliveries.length < 2; k++) await sleep(25);
    // Time for a duplicate to arrive, were one sent.
    await sleep(200);
    expect(deliveries).toHaveLength(2);
    expect(calls).toBe(3);
    const verifier = new Webhook(secret);
    const byTask = new Map<string, { type: string; data: Record<string, unknown> }>();
    for (const { headers, body } of deliveries) {
      const payload = verifier.verify(body, headers as Record<string, string>) as {
        type: string;
        data: Record<string, unknown>;
      };
      expect(headers['webhook-id']).toBe(`msg_${payload.data.id}`);
      byTask.set(payload.data.id as string, payload);
    }
    expect(byTask.size).toBe(2);
    expect(byTask.get(ok.id)).toMatchObject({ type: 'task.succeeded', data: { status: 'succeeded' } });
    expect(byTask.get(bad.id)).toMatchObject({
      type: 'task.failed',
      data: { status: 'failed', result_url: null, error: { code: 'BAD_INPUT' } },
    });
    // The result link answers the task's result.
    const link = byTask.get(ok.id)?.data.result_url as string;
    expect(await (await fetch(`${handle.url}${link}`)).json()).toEqual({ n: 1 });
    // A forged signature does not verify.
    const [first] = deliveries as [Delivery];
    expect(() => verifier.verify(`${first.body} `, first.headers as Record<string, string>)).toThrow();
  } finally {
    await handle.close();
    receiver.close();
  }
});
