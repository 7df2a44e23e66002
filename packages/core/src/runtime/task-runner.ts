import { errorAnswer } from '../errors/error-answer.js';
import { Cancelled } from '../errors/index.js';
import { BufferedHttpRequest, type HttpRequest } from '../http/request.js';
import type { HttpResponse } from '../http/response.js';
import type { Logger } from '../logging/logger.js';
import type { InferenceApi, Service } from '../service/service.js';
import { boundedProgress } from '../tasks/runner/progress-detail.js';
import { TaskResultTooLarge } from '../tasks/task-errors.js';
import type { ClaimedTask, TaskRequest, TaskResult, TaskStore, TaskView } from '../tasks/task-store.js';
import { endTaskRun, taskRunCall, withSubmitContext } from '../tracing/task-trace.js';
import { ApiCall } from './api-call.js';
import { httpCodec } from './http-codec.js';
import type { Invocation } from './invocation.js';
import { LazyAbort } from './lazy-abort.js';
import { isThenable, type Runtime } from './runtime.js';
import type { TaskMetrics } from './task-metrics.js';
import { TaskWebhooks, WEBHOOK_URL_HEADER } from './task-webhook.js';

/** Request headers a stored task does not keep: credentials stay with the request that carried them. */
const NOT_KEPT: ReadonlySet<string> = new Set(['authorization', 'cookie', 'proxy-authorization']);

/**
 * Runs a service's tasks: takes queued ones from its `TaskStore` (at most `concurrency` at once) and calls
 * each through `Runtime.invoke` exactly as `POST /<api>` would (decode, call alone or in a batch, encode),
 * under one of the runtime's call permits (waiting for one, not refused) and the API's deadline, with an
 * abort signal of its own that `cancel` fires. The encoded answer, or the error body, goes back to the store.
 */
export class TaskRunner {
  private running = 0;
  private pumping = false;
  /** Set when `pump` was asked for while it ran: a task submitted meanwhile may not have been seen. */
  private pumpAgain = false;

  constructor(
    private readonly service: Service,
    private readonly runtime: Runtime,
    private readonly logger: Logger,
    private readonly metrics?: TaskMetrics,
    /** Where a task's end is told when its submit named a webhook URL. */
    readonly webhooks: TaskWebhooks = new TaskWebhooks(undefined, logger),
  ) {}

  private stopWatching: (() => void) | undefined;
  /** Claims start once the app is ready (`start`): a task does not run before the startup hooks did. */
  private stopped = true;

  /** Start claiming: tasks queued before (by a stopped process, another replica) run now. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Tasks this process did not submit: another replica's, or those a stopped process left queued or running.
    this.stopWatching = this.store.onQueued?.(() => this.pump());
    this.pump();
  }

  /** Claim no more tasks (a shutdown): running ones finish; queued ones stay for another process. */
  stop(): void {
    this.stopped = true;
    this.stopWatching?.();
    this.stopWatching = undefined;
  }

  private get store(): TaskStore {
    return this.metrics?.store ?? this.service.tasks;
  }

  /**
   * Store a task for `api` from its submitted request and start it when a slot is free. `client` (the
   * caller's address) is held to its share of the unfinished tasks.
   */
  async submit(api: InferenceApi, request: HttpRequest, client?: string): Promise<{ id: string }> {
    // A webhook URL is checked now (a 400), and kept with the request's headers, so whichever process ends
    // the task (after a restart too) finds it.
    const webhook = request.headers.get(WEBHOOK_URL_HEADER);
    if (webhook !== undefined && webhook !== null) this.webhooks.check(webhook);
    const stored: TaskRequest = {
      method: request.method,
      url: request.url,
      headers: withSubmitContext(
        [...request.headers.entries()].filter(([name]) => !NOT_KEPT.has(name)),
        (request as Partial<Invocation>).trace,
      ),
      body: await request.body(),
    };
    const view = await this.store.submit(api.name, stored, { attempts: api.taskAttempts, client });
    this.metrics?.submitted(api.name);
    this.pump();
    return { id: view.id };
  }

  /** Start queued tasks while slots are free. */
  private pump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.pumpAgain = false;
          while (!this.stopped && this.running < this.service.taskConcurrency) {
            const task = await this.store.claim();
            if (!task) break;
            if (task.ended) {
              void this.tellWebhook(task);
              continue;
            }
            this.running++;
            void this.run(task).finally(() => {
              this.running--;
              this.pump();
            });
          }
        } while (this.pumpAgain);
      } catch (err) {
        this.logger.log('error', 'task store failed', {
          error: err instanceof Error ? err.message : String(err),
        });
        // A store that failed (a lost connection) is asked again shortly, not only on the next submit.
        setTimeout(() => this.pump(), 1000).unref();
      } finally {
        this.pumping = false;
      }
    })();
  }

  /**
   * A cancel answered `view`, and `queuedRequest` when it ended the task while queued: that task never runs, so
   * this process tells its webhook now, from the stored request's headers (whichever process submitted it). A
   * running task's end is told by its runner.
   */
  cancelled(view: TaskView, queuedRequest: TaskRequest | undefined, route: string): void {
    if (!queuedRequest || view.status !== 'cancelled') return;
    const url = webhookUrl(queuedRequest);
    if (url !== undefined) this.webhooks.deliver(url, view, route);
  }

  private async run(task: ClaimedTask): Promise<void> {
    const { id } = task;
    const claimedAt = performance.now();
    this.metrics?.started(task.api, task.attempt);
    const abort = new LazyAbort();
    const stopCancel = this.store.onCancel(id, () => abort.abort(new Cancelled(`task ${id} was cancelled`)));
    // The submitted request again, as the API's input descriptor reads it, with the task's abort signal.
    const request = replay(task.request, abort, this.runtime);
    const tracer = this.runtime.tracer;
    const traced = tracer ? taskRunCall(tracer, task.request.headers, task.api, id, task.attempt) : undefined;
    const call = new ApiCall(request, this.service.state, {
      requestId: id,
      api: this.service.apis.get(task.api),
      abort,
      task: {
        id,
        report: (progress) => {
          // A generation's steps are events of its run's span.
          traced?.span?.addEvent('step', { step: progress.step, 'step.total': progress.totalSteps ?? -1 });
          void this.store.progress(id, boundedProgress(progress)).catch(() => {});
        },
      },
    });
    call.trace = traced;
    let outcome: 'succeeded' | 'failed' | 'cancelled' = 'succeeded';
    let code: string | undefined;
    try {
      const api = call.api;
      if (!api?.task)
        throw new Error(`task ${id} names API ${task.api}, which is not a task API of this service`);
      await this.permit(call);
      call.startedAt = performance.now();
      const response = await this.runtime.withDeadline(
        call,
        this.runtime.invokeAsPromise(api, call, request, httpCodec(api)),
      );
      await this.store.complete(id, await readBounded(response, this.store.maxResultBytes));
    } catch (err) {
      const cancelled = abort.isAborted && !call.timedOut && !(err instanceof TaskResultTooLarge);
      const { body } = errorAnswer(cancelled ? (abortReason(abort) ?? err) : err, id, this.logger);
      outcome = cancelled ? 'cancelled' : 'failed';
      code = body.code;
      await this.store.fail(id, body, outcome).catch(() => {});
    } finally {
      stopCancel();
      endTaskRun(traced, outcome);
      for (const fn of call.onClose) fn();
      this.metrics?.ended(task.api, outcome, (performance.now() - claimedAt) / 1000, code);
      await this.tellWebhook(task);
      // A task has no access-log line of its own (its submit has): one line when it ends.
      this.logger.log('info', 'task ended', {
        taskId: id,
        api: task.api,
        status: outcome,
        attempt: task.attempt,
        ms: Math.round(performance.now() - call.startedAt),
      });
    }
  }

  /** The task ended: POST its end to the webhook its submit named, if any (in the background). */
  private async tellWebhook(task: ClaimedTask): Promise<void> {
    const url = webhookUrl(task.request);
    const api = this.service.apis.get(task.api);
    if (url === undefined || !api) return;
    try {
      const view = await this.store.status(task.id);
      // A task whose store did not record its end (a lost lease) is told by the process that ends it.
      if (view.status === 'succeeded' || view.status === 'failed' || view.status === 'cancelled')
        this.webhooks.deliver(url, view, api.route);
    } catch (err) {
      this.logger.log('warn', 'task webhook not sent', {
        taskId: task.id,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** One of the runtime's call permits, waiting while every one is taken (a cancel stops the wait). */
  private async permit(call: Invocation): Promise<void> {
    // Made only when a wait is needed: a task that finds a permit free makes no abort signal.
    let cancelled: Promise<void> | undefined;
    for (;;) {
      if (call.abort.isAborted) throw abortReason(call.abort);
      try {
        // An API with a queue of its own: the run waits there, in its turn (without the queue's bound).
        const admitted = this.runtime.admitCall(call);
        if (isThenable(admitted)) await admitted;
        return;
      } catch (err) {
        if (call.abort.isAborted || call.api?.admission) throw err;
        cancelled ??= aborted(call.abort);
        await Promise.race([this.runtime.gate.whenFree(), cancelled]);
      }
    }
  }
}

/** The webhook URL a task's submit named, kept with its stored request's headers. */
function webhookUrl(stored: TaskRequest): string | undefined {
  return stored.headers.find(([name]) => name === WEBHOOK_URL_HEADER)?.[1];
}

/** A stored request as an `HttpRequest` whose signal is the task's. */
function replay(stored: TaskRequest, abort: LazyAbort, runtime: Runtime): BufferedHttpRequest {
  return new BufferedHttpRequest({
    method: stored.method,
    url: stored.url,
    headers: stored.headers,
    body: Buffer.from(stored.body.buffer, stored.body.byteOffset, stored.body.byteLength),
    signal: () => abort.signal,
    limits: runtime.limits,
  });
}

/** The encoded answer as bytes, refused once it passes `maxBytes` (a stream is read only that far). */
async function readBounded(response: HttpResponse, maxBytes: number): Promise<TaskResult> {
  const tooLarge = () =>
    new TaskResultTooLarge(`The task's answer is larger than the ${maxBytes} bytes this server keeps`);
  let body: Uint8Array;
  if (response.body === null) body = new Uint8Array(0);
  else if (response.body instanceof Uint8Array) body = response.body;
  else {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge();
      chunks.push(Buffer.from(chunk));
    }
    body = Buffer.concat(chunks);
  }
  if (body.byteLength > maxBytes) throw tooLarge();
  return { status: response.status, headers: response.headers, body };
}

function aborted(abort: LazyAbort): Promise<void> {
  const { signal } = abort;
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function abortReason(abort: LazyAbort): unknown {
  return abort.isAborted ? abort.signal.reason : undefined;
}
