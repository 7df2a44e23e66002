/**
 * A model repository's control surface (docs/model-repository.md): what the Open Inference Protocol's repository
 * extension (`POST /v2/repository/index`, `/v2/repository/models/<name>/load|unload`, the gRPC `Repository*`
 * calls) and per-model readiness ask of the service that serves many models. A service without one answers the
 * index from its APIs, every model ready with the server.
 */
export type RepositoryModelState = 'READY' | 'UNAVAILABLE' | 'LOADING' | 'UNLOADING';

/** One row of `POST /v2/repository/index`, in the form Triton's and KServe's clients read. */
export interface RepositoryIndexEntry {
  readonly name: string;
  readonly version: string;
  readonly state: RepositoryModelState;
  /** Why a model is not ready (a failed load names its cause); empty when it is. */
  readonly reason: string;
}

export interface ModelRepositoryControl {
  /** Every model of the repository (only the ready ones with `readyOnly`), the folder read again as Triton's is. */
  index(readyOnly: boolean): RepositoryIndexEntry[] | Promise<RepositoryIndexEntry[]>;
  /** Load (or reload) a model; a failed load rejects and keeps the model that was serving. */
  load(name: string): Promise<void>;
  /** Unload a model once the calls in flight on it finish. */
  unload(name: string, options: { unloadDependents: boolean }): Promise<void>;
  /** Whether a model answers calls now (resident, or loaded on its first call); false for an unknown name. */
  ready(name: string): boolean;
}
