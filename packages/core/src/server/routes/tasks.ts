import { BadInput } from '../../errors/index.js';
import { buildResponse } from '../../http/response.js';
import type { Runtime } from '../../runtime/runtime.js';
import type { TaskRunner } from '../../runtime/task-runner.js';
import type { InferenceApi, TaskOperation } from '../../service/service.js';
import { followTask } from '../../tasks/runner/follow-task.js';
import { unknownTask } from '../../tasks/task-errors.js';
import { isTaskId } from '../../tasks/task-id.js';
import type { TaskEvent, TaskStore } from '../../tasks/task-store.js';
import { sseEvent } from '../../wire/sse/event.js';
import type { EventStreams } from '../event-streams.js';
import type { Exchange } from '../exchange.js';
import type { RouteHandler } from './route-table.js';

export interface TaskRouteDeps {
  runtime: Runtime;
  runner: TaskRunner;
  store: TaskStore;
  eventStreams: EventStreams;
}

/** Longest task id accepted in `?id=`; ids the server draws are UUIDs (36 characters). */
const MAX_ID_LENGTH = 128;

/**
 * The HTTP routes of a task API, by operation and method: `submit` reads and checks the input as the
 * synchronous route does (a bad input is its 4xx now) and answers 202 `{ id }`; the task then runs through
 * `Runtime.invoke` (`TaskRunner`). The others name the task with `?id=`.
 */
export function taskRoutes(
  api: InferenceApi,
  deps: TaskRouteDeps,
): Record<TaskOperation, Record<string, RouteHandler>> {
  const { runtime, runner, store, eventStreams } = deps;
  const submit = async (ctx: Exchange): Promise<void> => {
    runtime.assertReady();
    await ctx.body();
    runtime.admit(ctx);
    // Checked as the synchronous call checks it; the task decodes the stored request again when it runs
    // (what a durable store keeps is the request, not a decoded value).
    await api.input.fromHttpRequest(ctx);
    writeJson(ctx, 202, await runner.submit(api, ctx, ctx.req.socket.remoteAddress));
  };
  const status = async (ctx: Exchange): Promise<void> => {
    runtime.admit(ctx);
    writeJson(ctx, 200, await store.status(taskId(ctx)));
  };
  const get = async (ctx: Exchange): Promise<void> => {
    runtime.admit(ctx);
    ctx.answer(await store.result(taskId(ctx)));
  };
  const cancel = async (ctx: Exchange): Promise<void> => {
    runtime.admit(ctx);
    const { queuedRequest, ...view } = await store.cancel(taskId(ctx));
    runner.cancelled(view, queuedRequest, api.route);
    writeJson(ctx, 200, view);
  };
  const events = async (ctx: Exchange): Promise<void> => {
    const release = runtime.admit(ctx);
    const id = taskId(ctx);
    const stream = followTask(store, id, ctx.abort.signal);
    // The first event is read before the 200: an unknown id answers 404 with the error body, not a stream cut
    // off after its headers. (A store reads the task's state for it: no read of its own for the check.)
    const first = await stream.next();
    // Whichever way the exchange ends, the stream lets go of what it listens to (one never sent included).
    ctx.onClose.push(() => void stream.return(undefined).catch(() => {}));
    const response = buildResponse({
      body: eventLines(first, stream),
      mediaType: 'text/event-stream',
      headers: [['cache-control', 'no-cache']],
    });
    ctx.answer(eventStreams.adopt(response, ctx, release));
  };
  const methods = api.input.httpMethods;
  return {
    submit: Object.fromEntries(methods.map((m) => [m, submit])),
    status: { GET: status },
    get: { GET: get },
    cancel: { POST: cancel },
    events: { GET: events },
  };
}

/**
 * The one task id of `?id=`: present once, not empty, not longer than any id the server draws; one not of a
 * task id's form (`isTaskId`) is answered as an unknown task here, for every store, before it reaches one.
 */
function taskId(ctx: Exchange): string {
  const ids = new URLSearchParams(ctx.search).getAll('id');
  if (ids.length !== 1 || ids[0] === '')
    throw new BadInput('Name the task with one ?id= (the id /submit answered)', { code: 'TASK_ID_REQUIRED' });
  const id = ids[0] as string;
  if (id.length > MAX_ID_LENGTH)
    throw new BadInput(`The task id is ${id.length} characters; ids are at most ${MAX_ID_LENGTH}`, {
      code: 'TASK_ID_INVALID',
    });
  if (!isTaskId(id)) throw unknownTask(id);
  return id;
}

async function* eventLines(
  first: IteratorResult<TaskEvent>,
  rest: AsyncIterator<TaskEvent>,
): AsyncGenerator<string> {
  try {
    // A comment line first, so a client sees the stream open; sent with the first event (already read), in
    // one write rather than two.
    let chunk = ': progress\n\n';
    for (let next = first; !next.done; next = await rest.next()) {
      const { event, data } = next.value;
      yield chunk + sseEvent({ event, data });
      chunk = '';
    }
    if (chunk) yield chunk;
  } finally {
    await rest.return?.();
  }
}

function writeJson(ctx: Exchange, status: number, value: unknown): void {
  ctx.answer(buildResponse({ status, body: JSON.stringify(value), mediaType: 'application/json' }));
}
