import type { JobImage } from '../../worker-protocol.js';

/** The generation A1111's `/progress` reports and `/interrupt` stops (A1111 runs one at a time). */
export class A1111Progress {
  private job:
    | {
        controller: AbortController;
        started: number;
        iterations: number;
        iteration: number;
        step: number;
        steps: number;
        preview: JobImage | undefined;
        timestamp: string;
      }
    | undefined;

  /** Starts following a request of `iterations` generations; returns its signal (aborted by `interrupt`). */
  begin(iterations: number, outer: AbortSignal): { signal: AbortSignal; end: () => void } {
    const controller = new AbortController();
    const onOuter = () => controller.abort(outer.reason);
    outer.addEventListener('abort', onOuter, { once: true });
    const job = {
      controller,
      started: Date.now(),
      iterations,
      iteration: 0,
      step: 0,
      steps: 0,
      preview: undefined,
      timestamp: new Date().toISOString().replace(/\D/g, '').slice(0, 14),
    };
    this.job = job;
    return {
      signal: controller.signal,
      end: () => {
        outer.removeEventListener('abort', onOuter);
        if (this.job === job) this.job = undefined;
      },
    };
  }

  /** The generation moved to iteration `iteration` (0-based) of the request. */
  iteration(iteration: number): void {
    if (this.job) Object.assign(this.job, { iteration, step: 0 });
  }

  step(step: number, steps: number, preview: JobImage | undefined): void {
    if (!this.job) return;
    this.job.step = step;
    this.job.steps = steps;
    if (preview) this.job.preview = preview;
  }

  /** Stops the generation at its next step; true when there was one. */
  interrupt(): boolean {
    if (!this.job) return false;
    this.job.controller.abort(new Error('interrupted'));
    return true;
  }

  get interrupted(): boolean {
    return this.job?.controller.signal.aborted ?? false;
  }

  /** The state as numbers, and the latest preview. */
  snapshot(): {
    progress: number;
    etaRelative: number;
    job: { count: number; no: number; step: number; steps: number; timestamp: string; interrupted: boolean };
    preview: JobImage | undefined;
  } | null {
    const job = this.job;
    if (!job) return null;
    const within = job.steps > 0 ? job.step / job.steps : 0;
    const progress = Math.min(1, (job.iteration + within) / job.iterations);
    const elapsed = (Date.now() - job.started) / 1000;
    return {
      progress,
      etaRelative: progress > 0 ? elapsed / progress - elapsed : 0,
      job: {
        count: job.iterations,
        no: job.iteration,
        step: job.step,
        steps: job.steps,
        timestamp: job.timestamp,
        interrupted: job.controller.signal.aborted,
      },
      preview: job.preview,
    };
  }
}
