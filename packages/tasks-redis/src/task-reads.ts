import { truncateForMessage } from '@tiffin/core/descriptor';
import {
  queuedEta,
  queuedView,
  RECENT_RUNS,
  runningEta,
  TaskInterrupted,
  TaskNotFound,
  type TaskResult,
  type TaskView,
} from '@tiffin/core/tasks';
import { jobKey, lockKey, VIEW_FIELDS, waitAndActiveKeys } from './bullmq-assumptions.js';
import { type EncodedAnswer, type Ending, parseEnding } from './job-records.js';
import type { StoreContext } from './store-context.js';
import { endedView, finalTimes, jsonOrNull } from './task-views.js';

/**
 * Task `id`'s view from its job (or its ending, for a cancel that removed a waiting job), and its answer when
 * `withAnswer`, read in one round trip (`view-5.lua`); the fields are parsed as BullMQ parses them
 * (`Job.fromJSON`), the job's request left unread.
 */
export async function readTask(
  ctx: StoreContext,
  id: string,
  withAnswer = false,
): Promise<{ view: TaskView; result: TaskResult | null }> {
  const { queue, keys, held, settings } = ctx;
  const notFound = () =>
    new TaskNotFound(`no task ${truncateForMessage(id)} (unknown, or its result expired)`);
  if (id.length > 128) throw notFound();
  const [wait, active] = waitAndActiveKeys(queue);
  const job = jobKey(queue, id);
  const replying = ctx.scripts.tiffinView(
    job,
    active,
    wait,
    keys.ended(id),
    lockKey(job),
    id,
    settings.maxTasks + 1,
    keys.runsPrefix,
    RECENT_RUNS,
    withAnswer ? '1' : '0',
    ...VIEW_FIELDS,
  );
  // Sent after the view's script (the same write): an answer it finds completed is there to read.
  const kept = withAnswer ? held.answer(id) : null;
  kept?.catch(() => {});
  const reply = await replying;
  if (reply[0] === 0) {
    if (!reply[1]) throw notFound();
    const parsed = JSON.parse(reply[1]) as Ending & { at: number; api: string };
    return { view: endedView(id, parsed, settings.ttlMs), result: null };
  }
  const [name, timestamp, progressJson, processedOn, finishedOn, failedReason, answer] = reply[1];
  const progress = jsonOrNull(progressJson);
  const steps = (progress !== null && typeof progress === 'object' ? progress : {}) as {
    step?: number;
    total_steps?: number | null;
  };
  const view = queuedView(id, name, Number.parseInt(timestamp ?? '0', 10));
  view.step = steps.step ?? 0;
  view.total_steps = steps.total_steps ?? null;
  if (reply[0] === 1) {
    const finished = Number.parseInt(finishedOn ?? '0', 10);
    if (finished + settings.ttlMs <= Date.now()) throw notFound();
    Object.assign(view, finalTimes(finished, settings.ttlMs));
    const ending = parseEnding(failedReason ?? undefined);
    if (ending) {
      view.status = ending.status;
      view.error = ending.error;
      return { view, result: null };
    }
    const r = withAnswer ? (jsonOrNull(answer) as EncodedAnswer | null) : null;
    if (withAnswer ? r : answer === 1) {
      view.status = 'succeeded';
      if (!r) return { view, result: null };
      const body = r.kept ? await kept : Buffer.from(r.body ?? '', 'base64');
      // Kept apart, the answer expired a moment before the job's time to live ran out.
      if (!body) throw notFound();
      return { view, result: { status: r.status, headers: r.headers, body } };
    }
    view.status = 'failed';
    view.error = new TaskInterrupted(`task ${id} ended without an answer`).toBody();
    return { view, result: null };
  }
  if (reply[0] === 2) {
    view.status = 'running';
    const started = Number.parseInt(processedOn ?? '0', 10);
    if (started) view.eta_seconds = runningEta(view.step, view.total_steps, (Date.now() - started) / 1000);
    return { view, result: null };
  }
  // Waiting, at its place from 1 (`view-5.lua`, `WAIT_LIST_ORDER`).
  view.step = 0;
  const [, , position, runs] = reply;
  view.queue_position = position;
  view.eta_seconds = queuedEta(position, runs.map(Number));
  return { view, result: null };
}
