import { parseJsonBytes } from '../encoding/json-parse.js';
import { BadInput, NotFound, truncateForMessage } from '../errors/index.js';
import type { ModelRepositoryControl, RepositoryIndexEntry } from '../service/model-control.js';
import type { Service } from '../service/service.js';

/**
 * The repository extension's requests (Triton's `extension_model_repository`), read the same for HTTP and gRPC:
 * `{ "ready": bool }` for the index, `{ "parameters": { … } }` for load and unload, every field optional.
 */
function objectBody(bytes: Uint8Array, what: string, maxDepth: number): Record<string, unknown> {
  if (bytes.length === 0) return {};
  const value = parseJsonBytes(bytes, { maxDepth });
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BadInput(`The ${what} request body must be a JSON object`);
  return value as Record<string, unknown>;
}

/** `POST /v2/repository/index`'s body: whether only ready models are listed. */
export function readIndexRequest(bytes: Uint8Array, maxDepth: number): boolean {
  const { ready } = objectBody(bytes, 'repository index', maxDepth);
  if (ready !== undefined && typeof ready !== 'boolean')
    throw new BadInput('"ready" in the repository index request must be true or false');
  return ready === true;
}

/** A load or unload body's `parameters`; `unload_dependents` is the one an unload reads. */
export function readControlRequest(bytes: Uint8Array, maxDepth: number): { unloadDependents: boolean } {
  const { parameters } = objectBody(bytes, 'repository load/unload', maxDepth);
  if (parameters === undefined) return { unloadDependents: false };
  if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))
    throw new BadInput('"parameters" must be a JSON object');
  const dependents = (parameters as Record<string, unknown>).unload_dependents;
  if (dependents !== undefined && typeof dependents !== 'boolean')
    throw new BadInput('"unload_dependents" must be true or false');
  return { unloadDependents: dependents === true };
}

/** The index of a repository, or of a service without one: its protocol models, ready with the server. */
export function indexOf(
  control: ModelRepositoryControl | undefined,
  names: Iterable<string>,
  serverReady: boolean,
  readyOnly: boolean,
): RepositoryIndexEntry[] | Promise<RepositoryIndexEntry[]> {
  if (control) return control.index(readyOnly);
  const all = [...names].map(
    (name): RepositoryIndexEntry => ({
      name,
      version: '',
      state: serverReady ? 'READY' : 'UNAVAILABLE',
      reason: '',
    }),
  );
  return readyOnly ? all.filter((m) => m.state === 'READY') : all;
}

/** The model a load or unload names, refused before anything is asked of a service without a repository. */
export function controlledModel(
  control: ModelRepositoryControl | undefined,
  name: string,
): ModelRepositoryControl {
  if (!control)
    throw new NotFound(
      `Model '${truncateForMessage(name)}' is not in a model repository: this server serves a service, not a repository`,
      { code: 'MODEL_NOT_IN_REPOSITORY' },
    );
  return control;
}

/** Whether a protocol model answers now: the server ready and, in a repository, the model served. */
export function protocolModelReady(service: Service, name: string, serverReady: boolean): boolean {
  const control = service.modelRepository;
  return serverReady && (control ? control.ready(name) : true);
}
