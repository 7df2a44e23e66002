import { randomUUID } from 'node:crypto';
import {
  queuedView,
  type SubmitOptions,
  type TaskRequest,
  TasksClientFull,
  TasksFull,
  type TaskView,
} from '@tiffin/core/tasks';
import { unfinishedJobKeys } from './bullmq-assumptions.js';
import type { JobData } from './job-records.js';
import type { StoreContext } from './store-context.js';

/**
 * A submit: admitted in one round trip (`admit-10.lua`: the unfinished tasks over every replica, the client's
 * share, the bytes held, and the body's write), then added to BullMQ's queue; an add that fails gives back what
 * the admission took. The task's request is kept in its job, its body apart (`HeldBytes`).
 */
export async function admit(
  ctx: StoreContext,
  api: string,
  request: TaskRequest,
  options: SubmitOptions,
): Promise<TaskView> {
  const { settings, held } = ctx;
  const retry = { headers: { 'retry-after': '1' } };
  const client = options.client ?? null;
  const id = randomUUID();
  const body = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
  const verdict = await ctx.scripts.tiffinAdmit(
    ...unfinishedJobKeys(ctx.queue),
    ctx.keys.clients,
    ...held.admitKeys(id),
    settings.maxTasks,
    client === null ? '0' : '1',
    client ?? '',
    settings.share,
    ...held.admitArgs(id, body),
  );
  if (verdict === 1)
    throw new TasksFull(`${settings.maxTasks} tasks are unfinished; retry when one finishes`, retry);
  if (verdict === 2)
    throw new TasksClientFull(`You have ${settings.share} unfinished tasks; retry when one finishes`, retry);
  if (verdict === 3)
    throw new TasksFull(
      `The tasks hold the ${held.max} bytes this server keeps; retry when one finishes or expires`,
      retry,
    );
  const data: JobData = {
    api,
    method: request.method,
    url: request.url,
    headers: request.headers,
    // Kept apart, raw (`HeldBytes`): not in the job's JSON.
    body: '',
    attempts: Math.max(1, options.attempts ?? 1),
    client,
  };
  try {
    const ttl = Math.ceil(settings.ttlMs / 1000);
    await ctx.queue.add(api, data, {
      jobId: id,
      attempts: 1,
      removeOnComplete: { age: ttl },
      removeOnFail: { age: ttl },
    });
  } catch (err) {
    if (client !== null) await ctx.connections.commands.hincrby(ctx.keys.clients, client, -1).catch(() => {});
    await held.giveBack(id, false).catch(() => {});
    throw err;
  }
  return queuedView(id, api, Date.now());
}
