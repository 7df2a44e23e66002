import type { JobImage } from '../../worker-protocol.js';

/** What stopped a generation of an A1111 request early, when its caller did. */
export type CallerStop = 'interrupted' | 'skipped';

/** The numbers `/sdapi/v1/progress` reports of a job, and its latest preview. */
export interface A1111Snapshot {
  progress: number;
  etaRelative: number;
  job: {
    count: number;
    no: number;
    step: number;
    steps: number;
    timestamp: string;
    interrupted: boolean;
    skipped: boolean;
    /** The words of the prompt the model ignores (docs/spec/diffusion.md §3). */
    ignoredWords: readonly string[];
  };
  preview: JobImage | undefined;
}

/**
 * One txt2img/img2img request's `count` generations (A1111's `n_iter`), as `/progress` shows them: which one runs,
 * its step, its latest preview. A generation stops at its next step when the request ends (its deadline passed, its
 * client left), when the caller interrupts the job (no later generation starts) or skips it (the job goes on with
 * the next).
 */
export class A1111Job {
  private readonly started = Date.now();
  private readonly timestamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  private readonly job = new AbortController();
  private generation: AbortController | undefined;
  private no = 0;
  private step = 0;
  private steps = 0;
  private preview: JobImage | undefined;
  private interrupted = false;
  private skippedNo: number | undefined;
  /** The words of the request's prompt the model ignores, as `/progress` reports them. */
  ignoredWords: readonly string[] = [];
  private readonly onRequestEnd = () => this.job.abort(this.request.reason);

  constructor(
    private readonly count: number,
    /** The request's own signal (core's `ctx.state.signal`: its deadline, its client gone). */
    private readonly request: AbortSignal,
  ) {
    if (request.aborted) this.job.abort(request.reason);
    else request.addEventListener('abort', this.onRequestEnd, { once: true });
    this.job.signal.addEventListener('abort', () => this.generation?.abort(this.job.signal.reason), {
      once: true,
    });
  }

  /** Generation `no` (0-based) begins; its signal fires on the request's end, an interrupt or a skip. */
  begin(no: number): AbortSignal {
    this.no = no;
    this.step = 0;
    this.steps = 0;
    const generation = new AbortController();
    if (this.job.signal.aborted) generation.abort(this.job.signal.reason);
    this.generation = generation;
    return generation.signal;
  }

  /** A step of the running generation ended (with a preview image when there is one). */
  stepped(step: number, steps: number, preview: JobImage | undefined): void {
    this.step = step;
    this.steps = steps;
    if (preview) this.preview = preview;
  }

  /** Stops the running generation at its next step, and the job with it (A1111 answers the images so far). */
  interrupt(): void {
    this.interrupted = true;
    this.job.abort(new Error('interrupted'));
  }

  /** Stops the running generation at its next step; the job goes on with the next one. */
  skip(): void {
    if (!this.generation || this.generation.signal.aborted) return;
    this.skippedNo = this.no;
    this.generation.abort(new Error('skipped'));
  }

  /**
   * Why the running generation was stopped, when its caller stopped it; undefined when the request itself ended
   * (deadline, client gone) or nothing stopped it.
   */
  stoppedBy(): CallerStop | undefined {
    if (this.request.aborted) return undefined;
    if (this.interrupted) return 'interrupted';
    return this.skippedNo === this.no ? 'skipped' : undefined;
  }

  /** The request ended: nothing is left listening to its signal. */
  end(): void {
    this.request.removeEventListener('abort', this.onRequestEnd);
  }

  snapshot(): A1111Snapshot {
    const within = this.steps > 0 ? this.step / this.steps : 0;
    const progress = Math.min(1, (this.no + within) / this.count);
    const elapsed = (Date.now() - this.started) / 1000;
    return {
      progress,
      etaRelative: progress > 0 ? elapsed / progress - elapsed : 0,
      job: {
        count: this.count,
        no: this.no,
        step: this.step,
        steps: this.steps,
        timestamp: this.timestamp,
        interrupted: this.interrupted,
        skipped: this.skippedNo === this.no,
        ignoredWords: this.ignoredWords,
      },
      preview: this.preview,
    };
  }
}
