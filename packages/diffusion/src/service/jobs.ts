import { randomUUID } from 'node:crypto';
import { type ErrorBody, isTiffinError, NotFound, ServiceUnavailable, TiffinError } from '@tiffin/core';
import { GrpcStatus, type GrpcStatusCode, internalErrorBody } from '@tiffin/core/internal';
import { GenerationCancelled } from '../pipeline/cancel.js';
import type { GeneratedImages } from './images-output.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A submitted generation: what `GET /<api>/status` reports. */
export interface JobView {
  id: string;
  /** The API it was submitted to (`text2img`, `img2img`). */
  api: string;
  status: JobStatus;
  /** Steps finished and steps in all (while running, and after). */
  step: number;
  total_steps: number | null;
  /** The error of a failed job (the body the synchronous API would have answered). */
  error: ErrorBody | null;
  created_at: string;
  finished_at: string | null;
  /** When a finished job and its result are forgotten. */
  expires_at: string | null;
}

interface JobRecord extends JobView {
  controller: AbortController;
  result: GeneratedImages | null;
  expiresMs: number | null;
}

export interface JobStoreOptions {
  /** Jobs held at once, finished ones included (default 64). */
  maxJobs: number;
  /** Seconds a finished job's status and result are kept (default 600). */
  resultTtlSeconds: number;
}

/** No such job, or it was forgotten: 404 with its own code. */
export class JobNotFound extends NotFound {
  static override readonly code: string = 'JOB_NOT_FOUND';
}

/** The job has no result (yet, or ever): 409 `JOB_NOT_DONE`. */
export class JobNotDone extends TiffinError {
  static override readonly code: string = 'JOB_NOT_DONE';
  static override readonly httpStatus: number = 409;
  override get grpcStatus(): GrpcStatusCode {
    return GrpcStatus.FAILED_PRECONDITION;
  }
}

const FINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * Submitted generations (`/text2img/submit` and friends): bounded in count, results kept for a while.
 * Every job ends in a final state whatever its work does: `track` settles it from the work's promise.
 */
export class JobStore {
  private readonly jobs = new Map<string, JobRecord>();

  constructor(private readonly options: JobStoreOptions) {}

  get size(): number {
    return this.jobs.size;
  }

  /**
   * A new queued job whose work `run(signal)` starts now. At the cap, the oldest finished job is forgotten
   * first; when every job is still active, 503.
   */
  submit(api: string, run: (job: { id: string; signal: AbortSignal }) => Promise<GeneratedImages>): JobView {
    this.sweep();
    if (this.jobs.size >= this.options.maxJobs) {
      const oldestFinished = [...this.jobs.values()].find((j) => FINAL.has(j.status));
      if (!oldestFinished)
        throw new ServiceUnavailable(`${this.options.maxJobs} jobs are active; retry when one finishes`, {
          code: 'JOBS_FULL',
        });
      this.jobs.delete(oldestFinished.id);
    }
    const job: JobRecord = {
      id: randomUUID(),
      api,
      status: 'queued',
      step: 0,
      total_steps: null,
      error: null,
      created_at: new Date().toISOString(),
      finished_at: null,
      expires_at: null,
      controller: new AbortController(),
      result: null,
      expiresMs: null,
    };
    this.jobs.set(job.id, job);
    this.track(job, run({ id: job.id, signal: job.controller.signal }));
    return this.view(job);
  }

  /** The job started running / finished a step. */
  progress(id: string, step: number, totalSteps: number | null): void {
    const job = this.jobs.get(id);
    if (!job || FINAL.has(job.status)) return;
    job.status = 'running';
    job.step = step;
    job.total_steps = totalSteps ?? job.total_steps;
  }

  status(id: string): JobView {
    return this.view(this.record(id));
  }

  /** The images of a succeeded job; 409 for any other state. */
  result(id: string): GeneratedImages {
    const job = this.record(id);
    if (job.status === 'succeeded' && job.result) return job.result;
    throw new JobNotDone(`job ${id} is ${job.status}; its images are available once it has succeeded`, {
      detail: this.view(job),
    });
  }

  /** Cancel a queued or running job (at its next step); a finished job is left as it is. */
  cancel(id: string): JobView {
    const job = this.record(id);
    if (!FINAL.has(job.status)) job.controller.abort(new GenerationCancelled(`job ${id} was cancelled`));
    return this.view(job);
  }

  private record(id: string): JobRecord {
    this.sweep();
    const job = this.jobs.get(id);
    if (!job) throw new JobNotFound(`no job ${id.slice(0, 64)} (unknown, or its result expired)`);
    return job;
  }

  private track(job: JobRecord, work: Promise<GeneratedImages>): void {
    work.then(
      (result) => this.finish(job, 'succeeded', null, result),
      (err: unknown) => {
        if (err instanceof GenerationCancelled || job.controller.signal.aborted)
          this.finish(job, 'cancelled', errorBody(err), null);
        else this.finish(job, 'failed', errorBody(err), null);
      },
    );
  }

  private finish(job: JobRecord, status: JobStatus, error: ErrorBody | null, result: GeneratedImages | null) {
    job.status = status;
    job.error = error;
    job.result = result;
    const now = Date.now();
    job.finished_at = new Date(now).toISOString();
    job.expiresMs = now + this.options.resultTtlSeconds * 1000;
    job.expires_at = new Date(job.expiresMs).toISOString();
  }

  /** Forget finished jobs past their time. */
  private sweep(): void {
    const now = Date.now();
    for (const [id, job] of this.jobs)
      if (job.expiresMs !== null && job.expiresMs <= now) this.jobs.delete(id);
  }

  private view(job: JobRecord): JobView {
    const { controller: _c, result: _r, expiresMs: _e, ...view } = job;
    return { ...view };
  }
}

/** What a client is told about a failed job: a Tiffin error's body, or the generic internal one. */
function errorBody(err: unknown): ErrorBody {
  return isTiffinError(err) ? err.toBody() : internalErrorBody();
}
