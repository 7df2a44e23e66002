import type { Sharp } from 'sharp';

/** The part of sharp's (undocumented) instance state `snapshotPipeline` relies on; checked before use. */
interface PipelineState {
  options?: { input?: { buffer?: unknown } };
}

/**
 * `pipeline.clone()` without copying its input. sharp's clone structured-clones the instance's options,
 * input buffer included: for a pipeline over decoded pixels that is a fresh multi-megabyte copy (and its
 * page faults and GC pressure) on every encode. The copy is never written to, so the snapshot shares the
 * parent's input buffer instead; everything else (operations, output options) is cloned as sharp does it.
 * Stream input, or a sharp whose state does not look as expected, gets a plain `clone()`.
 */
export function snapshotPipeline(pipeline: Sharp): Sharp {
  const input = (pipeline as unknown as PipelineState).options?.input;
  const buffer = input?.buffer;
  if (!input || !(buffer instanceof Uint8Array)) return pipeline.clone();
  input.buffer = undefined;
  let snapshot: Sharp;
  try {
    snapshot = pipeline.clone();
  } finally {
    input.buffer = buffer;
  }
  const snapshotInput = (snapshot as unknown as PipelineState).options?.input;
  if (!snapshotInput) return pipeline.clone();
  snapshotInput.buffer = buffer;
  return snapshot;
}
