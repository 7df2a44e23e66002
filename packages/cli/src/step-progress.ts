import yoctoSpinner, { type Spinner } from 'yocto-spinner';

/** Says what a long command is doing, step by step, on stderr (stdout stays for the command's result). */
export interface StepProgress {
  /** Ends the current step (with its time) and starts the next. */
  step(text: string): void;
  /** Ends the last step; `failed` marks it so on a terminal. */
  done(failed?: boolean): void;
}

/** On a plain stream (CI, a pipe), how often a long step says it is still running. */
const STILL_RUNNING_MS = 30_000;

/**
 * A spinner with the step and its running time on a terminal (yocto-spinner: redraws in place, restores the
 * cursor), plain lines otherwise: `<text>...` at the start of each step, `  still <text> (60 s)` every 30 s.
 */
export function stepProgress(stream: NodeJS.WriteStream = process.stderr): StepProgress {
  let text = '';
  let started = 0;
  let spinner: Spinner | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const seconds = () => Math.round((Date.now() - started) / 1000);

  const finish = (failed: boolean) => {
    if (ticker) clearInterval(ticker);
    ticker = undefined;
    if (!text) return;
    const line = `${text} (${seconds()} s)`;
    if (spinner) {
      if (failed) spinner.error(line);
      else spinner.success(line);
    }
    spinner = undefined;
    text = '';
  };

  return {
    step(next) {
      finish(false);
      text = next;
      started = Date.now();
      if (stream.isTTY) {
        // The CLI handles SIGINT/SIGTERM itself; the spinner only draws.
        spinner = yoctoSpinner({ text: next, stream, handleSignals: false }).start();
        ticker = setInterval(() => {
          if (spinner) spinner.text = `${next} (${seconds()} s)`;
        }, 1000);
      } else {
        stream.write(`${next}...\n`);
        ticker = setInterval(() => stream.write(`  still ${next} (${seconds()} s)\n`), STILL_RUNNING_MS);
      }
      ticker.unref();
    },
    done(failed = false) {
      finish(failed);
    },
  };
}
