import type { NamedTensors } from '../signature/named-tensors.js';
import type { ModelSignature } from '../signature/signature.js';

/**
 * Something that runs a model: one call takes the input tensors by name and resolves with the output tensors
 * by name. A framework's in-thread session, a pool of worker threads, or a test double all fit.
 */
export interface ModelRunner {
  /**
   * Run one call. `signal` (the caller's: it fires when the client leaves or its deadline passes) drops the
   * call if it has not started yet, so calls nobody waits for do not hold the runners.
   */
  run(inputs: NamedTensors, signal?: AbortSignal): Promise<NamedTensors>;
  /** Free the runtime's resources (sessions, threads). Idempotent. */
  close(): Promise<void>;
}

/**
 * A loaded model, as `loadModel(tag)` of a framework module (`@tiffin/onnx`, `@tiffin/tfjs`) returns it:
 * its signature, the stored class labels when it has some, and `run` over a pool of runner instances.
 */
export interface LoadedModel extends ModelRunner {
  /** The model's name (the store name, or the file's base name); zero-code services are named after it. */
  readonly name: string;
  /** `name:version` when loaded from the store. */
  readonly tag: string | undefined;
  /** Which framework module loaded it (`onnx`, `tfjs`): the store's Module column. */
  readonly module: string;
  readonly signature: ModelSignature;
  /** Class names in output order (for top-k labels), when saved with the model. */
  readonly classes: readonly string[] | undefined;
  /** User metadata saved with the model. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Calls that may run at once: the worker threads, or 1 when the model runs on the event loop (`instances: 0`). */
  readonly instances: number;
  /**
   * Why the model cannot take calls now (every runner thread died and none could be started again), or null.
   * A zero-code service reports it on `/readyz`; `/livez` stays up (the process itself is fine).
   */
  health?(): string | null;
}
