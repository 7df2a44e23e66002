import { TiffinError } from '@tiffin/core';
import { GrpcStatus, type GrpcStatusCode } from '@tiffin/core/internal';

/**
 * A generation was cancelled: its client went away, its deadline passed, or it was cancelled by id;
 * before it started or at the next denoising step. Nobody usually reads the answer (409 when someone does).
 */
export class GenerationCancelled extends TiffinError {
  static override readonly code: string = 'CANCELLED';
  static override readonly httpStatus: number = 409;
  override get grpcStatus(): GrpcStatusCode {
    return GrpcStatus.CANCELLED;
  }
}

/** Throws `GenerationCancelled` once `signal` has aborted; call between denoising steps. */
export function throwIfCancelled(signal: AbortSignal | undefined, step: number, totalSteps: number): void {
  if (signal?.aborted)
    throw new GenerationCancelled(`The generation was cancelled after step ${step} of ${totalSteps}`);
}
