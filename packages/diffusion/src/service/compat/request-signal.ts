/**
 * The request's abort signal, as core gives it to mounted routes (`ctx.state.signal`): it fires when the request's
 * deadline passes (its 504 went out) or its client goes away, so the generation it started stops at its next step,
 * or never starts when it is still queued.
 */
export function requestSignal(ctx: { state: unknown }): AbortSignal {
  return (ctx.state as { signal: AbortSignal }).signal;
}
