/**
 * An abort signal made only when someone asks for it: creating an AbortSignal costs microseconds on Node 20,
 * a noticeable share of a small request, and most handlers never look at it.
 */
export class LazyAbort {
  // Declared, not initialised: constructing one (every request) then runs no code at all; they are set when used.
  declare private controller: AbortController | undefined;
  declare private reason: unknown;
  declare private aborted: boolean | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get isAborted(): boolean {
    return this.aborted === true;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
