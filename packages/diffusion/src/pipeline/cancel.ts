import { Cancelled } from '@tiffin/core/internal';

/**
 * A generation was cancelled: its client went away, its deadline passed, or it was cancelled by id;
 * before it started or at the next denoising step. Core's 409 `CANCELLED`, under the generation's name.
 */
export class GenerationCancelled extends Cancelled {}

/** Throws `GenerationCancelled` once `signal` has aborted; call between denoising steps. */
export function throwIfCancelled(signal: AbortSignal | undefined, step: number, totalSteps: number): void {
  if (signal?.aborted)
    throw new GenerationCancelled(`The generation was cancelled after step ${step} of ${totalSteps}`);
}
