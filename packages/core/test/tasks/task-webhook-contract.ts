import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DurableContract } from '@tiffin/core/testing';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { BadInput, JSONDescriptor, Service } from '../../src/index.js';
import type { TaskStore } from '../../src/tasks/task-store.js';
import { sleep, start } from '../server/helpers.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Task webhooks over a listening server, on any store: a real HTTP receiver that fails its first delivery
 * (500) and accepts the next; every task's end arrives once, verifies with the shared secret (the Standard
 * Webhooks reference package), and URLs outside `--webhook-allow` are refused at submit.
 */
export function describeTaskWebhooks(
  name: string,
  make: () => Promise<TaskStore>,
  durable?: DurableContract,
): void {
  describe(`${name} (task webhooks)`, () => {
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
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const service = new Service('hooks').api(
        { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
        async (input) => {
          if ((input as { wait?: boolean }).wait) await gate;
          if ((input as { fail?: boolean }).fail) throw new BadInput('asked to fail');
          return input;
        },
      );
      const store = await make();
      service.useTaskStore(store);
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
        // One task at a time runs: the first holds the slot while the second, queued, is cancelled.
        await submit(hook, { wait: true });
        const dropped = (await (await submit(hook, { n: 0 })).json()) as { id: string };
        const cancel = await fetch(`${handle.url}/echo/cancel?id=${dropped.id}`, { method: 'POST' });
        expect(((await cancel.json()) as { status: string }).status).toBe('cancelled');
        // A task this server never saw submitted (another replica's, or one stored before a restart), cancelled
        // here while queued: its webhook is told from the stored request. The answer shows the view alone.
        const elsewhere = await store.submit('echo', {
          method: 'POST',
          url: '/echo/submit',
          headers: [
            ['content-type', 'application/json'],
            ['tiffin-webhook-url', hook],
          ],
          body: Buffer.from('{"n":2}'),
        });
        const cancelElsewhere = await fetch(`${handle.url}/echo/cancel?id=${elsewhere.id}`, {
          method: 'POST',
        });
        const elsewhereView = (await cancelElsewhere.json()) as Record<string, unknown>;
        expect(elsewhereView).toMatchObject({ id: elsewhere.id, status: 'cancelled' });
        expect(elsewhereView).not.toHaveProperty('queuedRequest');
        release();
        const ok = (await (await submit(hook, { n: 1 })).json()) as { id: string };
        const bad = (await (await submit(hook, { fail: true })).json()) as { id: string };
        for (let k = 0; k < 200 && deliveries.length < 5; k++) await sleep(25);
        // Time for a duplicate to arrive, were one sent.
        await sleep(200);
        expect(deliveries).toHaveLength(5);
        expect(calls).toBe(6);
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
        expect(byTask.size).toBe(5);
        for (const id of [dropped.id, elsewhere.id])
          expect(byTask.get(id)).toMatchObject({
            type: 'task.cancelled',
            data: { status: 'cancelled', error: { code: 'CANCELLED' } },
          });
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

    it.runIf(durable)(
      'tells the end of a task its stopped process left running, out of attempts (TASK_INTERRUPTED)',
      async () => {
        const bodies: string[] = [];
        const receiver = createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            bodies.push(Buffer.concat(chunks).toString());
            res.writeHead(204).end();
          });
        });
        await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
        const port = (receiver.address() as AddressInfo).port;
        const first = await make();
        // Submitted and started by a process that then stopped (killed: its task left running).
        const { id } = await first.submit('echo', {
          method: 'POST',
          url: '/echo/submit',
          headers: [
            ['content-type', 'application/json'],
            ['tiffin-webhook-url', `http://127.0.0.1:${port}/hook`],
          ],
          body: Buffer.from('{"n":3}'),
        });
        expect((await first.claim())?.id).toBe(id);
        const service = new Service('hooks').api(
          { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
          async (input) => input,
        );
        service.useTaskStore(await (durable as DurableContract).reopen(first));
        const handle = await start(service, {
          webhooks: { allow: [`127.0.0.1:${port}`], secret: `whsec_${randomBytes(24).toString('base64')}` },
        });
        try {
          for (let k = 0; k < 200 && bodies.length === 0; k++) await sleep(25);
          await sleep(200);
          expect(bodies).toHaveLength(1);
          expect(JSON.parse(bodies[0] as string)).toMatchObject({
            type: 'task.failed',
            data: { id, status: 'failed', error: { code: 'TASK_INTERRUPTED' } },
          });
        } finally {
          await handle.close();
          receiver.close();
        }
      },
    );
  });
}
