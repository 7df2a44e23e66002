import { ServiceUnavailable } from '@tiffin/core';
import {
  InvalidArgument,
  type LoadedModel,
  type ModelDescription,
  type ModelRunner,
  type NamedTensors,
  type RepositoryModelState,
} from '@tiffin/core/internal';
import type { RepositoryEntry } from './entries.js';

/** A loaded model with the calls running on it: closed once it is replaced or unloaded and the last call ends. */
interface Resident {
  readonly model: LoadedModel;
  readonly bytes: number;
  refs: number;
  retired: boolean;
}

/** What a slot asks of the repository around it: loading a file, making room, counting. */
export interface SlotHost {
  open(entry: RepositoryEntry): Promise<LoadedModel>;
  /** Make room for `bytes` more (evicting idle models), before a load. */
  makeRoom(slot: ModelSlot | undefined, bytes: number): Promise<void>;
  loaded(slot: ModelSlot, seconds: number): void;
  /** The last call on a slot's model ended: a budget passed while every model was busy is restored. */
  released(slot: ModelSlot): void;
  /** Whether a model not resident loads on its next call (a budget is set) rather than answering 503. */
  readonly loadsOnDemand: boolean;
}

function sameSignature(a: ModelDescription, b: ModelDescription): boolean {
  return JSON.stringify(a.signature) === JSON.stringify(b.signature);
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.slice(0, 500);
}

/**
 * One model of a repository (docs/model-repository.md): its state as the index shows it, the loaded model (if
 * resident), the one load in flight that every caller shares, and the calls running on each loaded model, so
 * a reload or unload closes a model only once the calls that started on it are done.
 */
export class ModelSlot {
  state: RepositoryModelState = 'UNAVAILABLE';
  reason = 'not loaded';
  /** What the API serves: fixed by the first load (a reload must keep the signature). */
  description: ModelDescription | undefined;
  lastUsed = 0;
  /** Unloaded on request: calls answer 503 until it is loaded again (evicted models load on their next call). */
  private unloaded = false;
  private resident: Resident | undefined;
  private loading: Promise<void> | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    readonly name: string,
    public entry: RepositoryEntry,
    private readonly host: SlotHost,
  ) {}

  get residentBytes(): number {
    return this.resident?.bytes ?? 0;
  }

  get isResident(): boolean {
    return this.resident !== undefined;
  }

  /** Whether a call is answered now: resident, or (with a budget) loaded by the call. */
  get answers(): boolean {
    return this.resident !== undefined || (this.host.loadsOnDemand && !this.unloaded && !!this.description);
  }

  /** Resident and no call running on it: what eviction may take. */
  get idle(): boolean {
    return this.resident !== undefined && this.resident.refs === 0 && !this.loading;
  }

  /** Operations on one slot run one after another (a load, a reload, an unload). */
  private serial<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tail.then(op, op);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Load (or reload) the entry on disk; every caller during one load shares it. A failure keeps the model that
   * was serving and says why in `reason`; it rejects with MODEL_LOAD_FAILED.
   */
  load(): Promise<void> {
    this.unloaded = false;
    this.loading ??= this.serial(() => this.loadNow()).finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async loadNow(): Promise<void> {
    const serving = this.resident;
    if (!serving) this.state = 'LOADING';
    const entry = this.entry;
    const started = performance.now();
    let model: LoadedModel;
    try {
      await this.host.makeRoom(this, entry.bytes);
      model = await this.host.open(entry);
    } catch (err) {
      this.failed(serving, `failed to load '${this.name}': ${message(err)}`);
    }
    // Served under the repository's name (Triton's layout names every file model.onnx).
    const { run: _run, close: _close, health: _health, ...loaded } = model;
    const description: ModelDescription = { ...loaded, name: this.name };
    if (this.description && !sameSignature(this.description, description)) {
      await model.close().catch(() => undefined);
      this.failed(
        serving,
        `failed to load '${this.name}': its inputs or outputs differ from the served ones (restart the server to serve the new signature)`,
      );
    }
    this.description ??= description;
    this.resident = { model, bytes: entry.bytes, refs: 0, retired: false };
    if (serving) this.retire(serving);
    this.state = 'READY';
    this.reason = '';
    this.host.loaded(this, (performance.now() - started) / 1000);
  }

  private failed(serving: Resident | undefined, why: string): never {
    this.reason = serving ? `${why} (the model loaded before still serves)` : why;
    if (!serving) this.state = 'UNAVAILABLE';
    throw new InvalidArgument(this.reason, { code: 'MODEL_LOAD_FAILED' });
  }

  private retire(resident: Resident): void {
    resident.retired = true;
    if (resident.refs === 0) void resident.model.close().catch(() => undefined);
  }

  /** Unload on request (`evicted`: to make room, loaded again by its next call). */
  unload(why: 'unloaded' | 'evicted' | 'removed from the repository'): Promise<void> {
    if (why !== 'evicted') this.unloaded = true;
    return this.serial(async () => {
      const resident = this.resident;
      this.resident = undefined;
      this.state = 'UNAVAILABLE';
      this.reason =
        why === 'evicted' ? 'not resident (evicted to stay within the budget); loads on its next call' : why;
      if (resident) this.retire(resident);
    });
  }

  /** The runner the model's API calls: whatever model is resident when the call starts. */
  runner(): ModelRunner {
    return {
      run: (inputs, signal) => this.run(inputs, signal),
      close: async () => undefined,
    };
  }

  private async run(inputs: NamedTensors, signal: AbortSignal | undefined): Promise<NamedTensors> {
    if (!this.resident) {
      if (this.unloaded || !this.host.loadsOnDemand)
        throw new ServiceUnavailable(`Model '${this.name}' is not loaded: ${this.reason}`, {
          code: 'MODEL_NOT_LOADED',
        });
      // A load that fails on a call is the server's state, not the caller's mistake: 503 with the reason.
      await withSignal(this.load(), signal).catch((err: unknown) => {
        if ((err as { code?: unknown }).code !== 'MODEL_LOAD_FAILED') throw err;
        throw new ServiceUnavailable(`Model '${this.name}' is not loaded: ${this.reason}`, {
          code: 'MODEL_NOT_LOADED',
        });
      });
    }
    const resident = this.resident;
    if (!resident)
      throw new ServiceUnavailable(`Model '${this.name}' is not loaded: ${this.reason}`, {
        code: 'MODEL_NOT_LOADED',
      });
    this.lastUsed = performance.now();
    resident.refs++;
    try {
      return await resident.model.run(inputs, signal);
    } finally {
      resident.refs--;
      this.lastUsed = performance.now();
      if (resident.refs === 0) {
        if (resident.retired) void resident.model.close().catch(() => undefined);
        else this.host.released(this);
      }
    }
  }

  /** Close the resident model (server shutdown). */
  async close(): Promise<void> {
    const resident = this.resident;
    this.resident = undefined;
    if (resident) await resident.model.close();
  }
}

/** `promise`, or the signal's reason once it fires first (a caller whose deadline passed stops waiting). */
function withSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(e);
      },
    );
  });
}
