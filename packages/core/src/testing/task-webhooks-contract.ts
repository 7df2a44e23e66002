import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { JSONDescriptor } from '../io/descriptors/json.js';
import { MemoryLogger } from '../logging/logger.js';
import { type ServerHandle, serve } from '../server/serve.js';
import { Service } from '../service/service.js';
import type { TaskRequest, TaskStore } from '../tasks/task-store.js';
import type { DurableContract } from './task-store-contract.js';

/**
 * What a store owes task webhooks, over a listening server: a task the store ends without running it is handed
 * back with its stored request, so that the process that ended it tells the webhook its submit named, whichever
 * process submitted it. That is a task cancelled while queued (`CancelAnswer.queuedRequest`), this server's or
 * one it never saw submitted (another replica's, or one kept across a restart), and, for a durable store, one
 * its stopped process left running, out of attempts (`ClaimedTask.ended`). Each end is told once. How a webhook
 * is signed, retried and which URLs it may name is core's, the same on every store, and tested in core.
 */
export function describeTaskWebhooks(
  name: string,
  make: () => Promise<TaskStore>,
  durable?: DurableContract,
): void {
  describe(`${name} (task webhooks)`, () => {
    it('tells the end of a task cancelled while queued, here or submitted elsewhere, once; and of one that ran', async () => {
      const receiver = await Receiver.listen();
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const service = new Service('hooks').api(
        { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
        async (input) => {
          if ((input as { wait?: boolean }).wait) await gate;
          return input;
        },
      );
      const store = await make();
      service.useTaskStore(store);
      const handle = await start(service, receiver.port);
      const hook = receiver.url;
      const post = (path: string, body?: unknown) =>
        fetch(`${handle.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'tiffin-webhook-url': hook },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      try {
        // One task at a time runs: the first holds the slot while the second, queued, is cancelled.
        const ran = (await (await post('/echo/submit', { wait: true })).json()) as { id: string };
        const dropped = (await (await post('/echo/submit', { n: 0 })).json()) as { id: string };
        const cancel = await post(`/echo/cancel?id=${dropped.id}`);
        expect(((await cancel.json()) as { status: string }).status).toBe('cancelled');
        // A task this server never saw submitted, cancelled here while queued: its webhook is told from the
        // stored request. The answer shows the view alone.
        const elsewhere = await store.submit('echo', hooked(hook, '{"n":2}'));
        const cancelElsewhere = await post(`/echo/cancel?id=${elsewhere.id}`);
        const elsewhereView = (await cancelElsewhere.json()) as Record<string, unknown>;
        expect(elsewhereView).toMatchObject({ id: elsewhere.id, status: 'cancelled' });
        expect(elsewhereView).not.toHaveProperty('queuedRequest');
        release();
        const told = await receiver.received(3);
        const byTask = new Map(told.map((t) => [t.data.id, t]));
        expect(byTask.size).toBe(3);
        for (const id of [dropped.id, elsewhere.id])
          expect(byTask.get(id)).toMatchObject({
            type: 'task.cancelled',
            data: { status: 'cancelled', error: { code: 'CANCELLED' } },
          });
        expect(byTask.get(ran.id)).toMatchObject({ type: 'task.succeeded', data: { status: 'succeeded' } });
      } finally {
        await handle.close();
        receiver.close();
      }
    });

    it.runIf(durable)(
      'tells the end of a task its stopped process left running, out of attempts (TASK_INTERRUPTED)',
      async () => {
        const receiver = await Receiver.listen();
        const first = await make();
        // Submitted and started by a process that then stopped (killed: its task left running).
        const { id } = await first.submit('echo', hooked(receiver.url, '{"n":3}'));
        expect((await first.claim())?.id).toBe(id);
        const service = new Service('hooks').api(
          { name: 'echo', input: new JSONDescriptor(), output: new JSONDescriptor(), task: true },
          async (input) => input,
        );
        service.useTaskStore(await (durable as DurableContract).reopen(first));
        const handle = await start(service, receiver.port);
        try {
          expect(await receiver.received(1)).toMatchObject([
            { type: 'task.failed', data: { id, status: 'failed', error: { code: 'TASK_INTERRUPTED' } } },
          ]);
        } finally {
          await handle.close();
          receiver.close();
        }
      },
    );
  });
}

/** A stored submit that names `hook` as its webhook. */
function hooked(hook: string, body: string): TaskRequest {
  return {
    method: 'POST',
    url: '/echo/submit',
    headers: [
      ['content-type', 'application/json'],
      ['tiffin-webhook-url', hook],
    ],
    body: Buffer.from(body),
  };
}

/** The service on a loopback port, its webhooks allowed to the receiver's port. */
function start(service: Service, port: number): Promise<ServerHandle> {
  return serve(service, {
    port: 0,
    host: '127.0.0.1',
    handleSignals: false,
    logger: new MemoryLogger(),
    webhooks: { allow: [`127.0.0.1:${port}`], secret: `whsec_${randomBytes(24).toString('base64')}` },
  });
}

interface Told {
  type: string;
  data: Record<string, unknown>;
}

/** A real HTTP receiver on a loopback port that answers 204 and keeps each body it is sent. */
class Receiver {
  private readonly bodies: Told[] = [];

  private constructor(private readonly server: ReturnType<typeof createServer>) {}

  static async listen(): Promise<Receiver> {
    const receiver: Receiver = new Receiver(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          receiver.bodies.push(JSON.parse(Buffer.concat(chunks).toString()) as Told);
          res.writeHead(204).end();
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** The bodies once `count` have come, and a moment more (for a duplicate to arrive, were one sent). */
  async received(count: number): Promise<Told[]> {
    for (let k = 0; k < 400 && this.bodies.length < count; k++) await sleep(25);
    await sleep(200);
    expect(this.bodies).toHaveLength(count);
    return [...this.bodies];
  }

  close(): void {
    this.server.close();
  }
}
