import { basename, resolve } from 'node:path';
import { type Logger, type ModelServiceOptions, NotFound, Service } from '@tiffin/core';
import {
  addModelApi,
  CLIException,
  InvalidArgument,
  type LoadedModel,
  type ModelRepositoryControl,
  type RepositoryIndexEntry,
  truncateForMessage,
} from '@tiffin/core/internal';
import { type RepositoryEntry, type RepositoryScan, scanRepository } from './entries.js';
import { ModelSlot, type SlotHost } from './model-slot.js';
import { watchRepository } from './poll.js';
import { type RepositoryMetrics, repositoryMetrics } from './repository-metrics.js';
import { evictionsFor, type ResidencyBudget } from './residency.js';

export type ModelControlMode = 'explicit' | 'poll' | 'none';

export interface RepositoryOptions {
  /** The folder the repository is named after, and the one `poll` watches. */
  dir: string;
  /** Read the repository as it is now (default: the models of `dir`; a store repository reads the store). */
  scan?: () => Promise<RepositoryScan>;
  /** `--model`: serve only these (default every model of the folder). */
  only?: readonly string[];
  control: ModelControlMode;
  budget: ResidencyBudget;
  /** Load one entry's model (its framework's `loadModel` with the server's flags). */
  open: (entry: RepositoryEntry) => Promise<LoadedModel>;
  /** The flags' batching and outputs, for a model whose config sets none. */
  defaults: ModelServiceOptions;
  logger: Logger;
}

function serviceNameOf(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
    .slice(0, 63);
  return name || 'models';
}

/**
 * A model repository served by one service (docs/model-repository.md): every model of the folder under its
 * name (`/<name>/predict`, `/v2/models/<name>/infer`, gRPC), loaded at start, reloaded and unloaded through
 * the repository API (or on file changes with `poll`), resident within a budget, least recently used first out.
 */
export class ModelRepository implements ModelRepositoryControl, SlotHost {
  private readonly slots = new Map<string, ModelSlot>();
  /** Names the index lists but no API serves, with the reason (a broken model at start, a name refused). */
  private readonly unserved = new Map<string, string>();
  /** Loads of models not served yet, by name: concurrent loads of one new model share one. */
  private readonly adding = new Map<string, Promise<ModelSlot>>();
  /** The fingerprint of a model that failed to load: `poll` tries it again once its files change. */
  private readonly failedPrints = new Map<string, string>();
  private readonly metrics: RepositoryMetrics;
  private stopWatching: (() => Promise<void>) | undefined;
  readonly service: Service;
  readonly loadsOnDemand: boolean;

  private constructor(private readonly options: RepositoryOptions) {
    this.service = new Service(serviceNameOf(options.dir), {
      doc: `The models of ${basename(resolve(options.dir))}: \`POST /v2/repository/index\` lists them.`,
    });
    this.metrics = repositoryMetrics(this.service);
    this.loadsOnDemand = options.budget.maxModels !== undefined || options.budget.maxBytes !== undefined;
  }

  /** Scan the folder, load every model (within the budget) and build the service that serves them. */
  static async open(options: RepositoryOptions): Promise<ModelRepository> {
    const repo = new ModelRepository(options);
    await repo.start();
    return repo;
  }

  private async start(): Promise<void> {
    const { dir, only } = this.options;
    const scan = await this.scan();
    for (const name of only ?? []) {
      if (!scan.entries.has(name))
        throw new CLIException(
          `--model ${name}: no such model in ${dir} (models: ${[...scan.entries.keys()].join(', ') || 'none'})`,
        );
    }
    for (const [name, reason] of scan.refused)
      if (!only || only.includes(name)) this.unserved.set(name, reason);
    for (const entry of scan.entries.values()) {
      if (only && !only.includes(entry.name)) continue;
      await this.serve(entry).catch((err: unknown) => this.unserved.set(entry.name, (err as Error).message));
    }
    if (this.slots.size === 0)
      throw new CLIException(
        `${dir}: no model of the repository could be served (${[...this.unserved].map(([n, r]) => `${n}: ${r}`).join('; ') || 'none found'})`,
      );
    this.service.useModelRepository(this);
    if (this.options.control === 'poll')
      this.service.onStartup(() => {
        this.stopWatching = watchRepository(dir, () => this.rescan());
      });
    this.service.onShutdown(async () => {
      await this.stopWatching?.();
      await Promise.all([...this.slots.values()].map((s) => s.close()));
    });
  }

  /**
   * Load one entry and serve it under its name (at start, or a model added to the folder while serving: its
   * routes join the running server's). Rejects with the reason; nothing is served then.
   */
  private serve(entry: RepositoryEntry): Promise<ModelSlot> {
    const pending = this.adding.get(entry.name);
    if (pending) return pending;
    const adding = this.serveNow(entry).finally(() => this.adding.delete(entry.name));
    this.adding.set(entry.name, adding);
    return adding;
  }

  private async serveNow(entry: RepositoryEntry): Promise<ModelSlot> {
    const slot = new ModelSlot(entry.name, entry, this);
    this.failedPrints.set(entry.name, entry.fingerprint);
    await slot.load().catch((err: unknown) => this.logFailure(slot, err));
    if (!slot.description) throw new Error(slot.reason);
    try {
      addModelApi(this.service, slot.description, () => slot.runner(), {
        ...this.options.defaults,
        ...entry.config,
        route: `/${entry.name}/predict`,
        // --cache-ttl's key follows the files served now: a reload of changed files is new keys.
        cacheVersion: () => `${slot.entry.version}/${slot.entry.fingerprint}`,
      });
    } catch (err) {
      await slot.close();
      throw new Error(`not served: ${(err as Error).message}`);
    }
    this.slots.set(entry.name, slot);
    this.unserved.delete(entry.name);
    this.failedPrints.delete(entry.name);
    return slot;
  }

  /** Whether `--model` (if given) lets this name be served. */
  private wanted(name: string): boolean {
    return !this.options.only || this.options.only.includes(name);
  }

  private scan(): Promise<RepositoryScan> {
    return this.options.scan ? this.options.scan() : scanRepository(this.options.dir);
  }

  private logFailure(slot: ModelSlot, err: unknown): void {
    this.options.logger.log('warn', 'model load failed', {
      model: slot.name,
      reason: slot.reason || String(err),
    });
  }

  /** `poll`: the folder changed; changed models reload (a failure keeps the serving one), removed ones unload. */
  async rescan(): Promise<void> {
    const scan = await this.scan().catch(() => null);
    if (!scan) return;
    for (const slot of this.slots.values()) {
      const entry = scan.entries.get(slot.name);
      if (!entry) {
        if (slot.reason !== 'removed from the repository') await slot.unload('removed from the repository');
        continue;
      }
      if (entry.fingerprint === slot.entry.fingerprint) continue;
      slot.entry = entry;
      await slot.load().catch((err: unknown) => this.logFailure(slot, err));
    }
    // A model added while serving, or one that failed and changed since, loads on its own.
    for (const entry of scan.entries.values()) {
      if (this.slots.has(entry.name) || !this.wanted(entry.name)) continue;
      if (this.failedPrints.get(entry.name) === entry.fingerprint) continue;
      await this.serve(entry).catch((err: unknown) => this.unserved.set(entry.name, (err as Error).message));
    }
  }

  private slot(name: string): ModelSlot {
    const slot = this.slots.get(name);
    if (slot) return slot;
    const why = this.unserved.get(name);
    if (why)
      throw new InvalidArgument(`Model '${name}' is not served: ${why}`, { code: 'MODEL_LOAD_FAILED' });
    throw new NotFound(`The model repository has no model '${truncateForMessage(name)}'`, {
      code: 'MODEL_NOT_IN_REPOSITORY',
    });
  }

  private controlled(name: string): ModelSlot {
    const slot = this.slot(name);
    if (this.options.control === 'none')
      throw new InvalidArgument(
        'Model control is off (--model-control none): this server loads and unloads nothing on request',
        { code: 'MODEL_CONTROL_DISABLED' },
      );
    return slot;
  }

  /** The folder as it is now (Triton reads the repository again for its index): a new model is listed too. */
  async index(readyOnly: boolean): Promise<RepositoryIndexEntry[]> {
    const scan = await this.scan().catch(() => null);
    if (scan) {
      for (const name of [...this.unserved.keys()])
        if (!scan.entries.has(name) && !scan.refused.has(name) && !this.adding.has(name))
          this.unserved.delete(name);
      for (const [name, reason] of scan.refused) if (this.wanted(name)) this.unserved.set(name, reason);
      for (const name of scan.entries.keys())
        if (!this.slots.has(name) && !this.unserved.has(name) && this.wanted(name))
          this.unserved.set(
            name,
            this.options.control === 'poll'
              ? 'added while serving: loading'
              : 'in the repository, not loaded: POST /v2/repository/models/<name>/load loads it',
          );
    }
    const rows: RepositoryIndexEntry[] = [...this.slots.values()].map((s) => ({
      name: s.name,
      version: s.entry.version,
      state: s.state,
      reason: s.reason,
    }));
    for (const [name, reason] of this.unserved)
      rows.push({ name, version: '', state: this.adding.has(name) ? 'LOADING' : 'UNAVAILABLE', reason });
    rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return readyOnly ? rows.filter((r) => r.state === 'READY') : rows;
  }

  /**
   * Load or reload from the folder as it is now (Triton's load reads the repository again): a model copied into
   * the folder while serving is loaded and served from then on.
   */
  async load(name: string): Promise<void> {
    if (!this.slots.has(name)) return this.loadNew(name);
    const slot = this.controlled(name);
    const entry = (await this.scan()).entries.get(name);
    if (!entry) {
      slot.reason = `failed to load '${name}': it is no longer in the repository`;
      throw new InvalidArgument(slot.reason, { code: 'MODEL_LOAD_FAILED' });
    }
    slot.entry = entry;
    await slot.load();
  }

  private async loadNew(name: string): Promise<void> {
    const scan = await this.scan();
    const entry = scan.entries.get(name);
    const refused = scan.refused.get(name);
    if ((!entry && refused === undefined) || !this.wanted(name))
      throw new NotFound(`The model repository has no model '${truncateForMessage(name)}'`, {
        code: 'MODEL_NOT_IN_REPOSITORY',
      });
    if (this.options.control === 'none')
      throw new InvalidArgument(
        'Model control is off (--model-control none): this server loads and unloads nothing on request',
        { code: 'MODEL_CONTROL_DISABLED' },
      );
    if (!entry) {
      this.unserved.set(name, refused as string);
      throw new InvalidArgument(`Model '${name}' is not served: ${refused}`, { code: 'MODEL_LOAD_FAILED' });
    }
    try {
      await this.serve(entry);
    } catch (err) {
      const reason = (err as Error).message;
      this.unserved.set(name, reason);
      throw new InvalidArgument(reason, { code: 'MODEL_LOAD_FAILED' });
    }
  }

  async unload(name: string): Promise<void> {
    await this.controlled(name).unload('unloaded');
  }

  ready(name: string): boolean {
    return this.slots.get(name)?.answers === true;
  }

  // SlotHost
  open(entry: RepositoryEntry): Promise<LoadedModel> {
    this.metrics.loads(entry.name);
    return this.options.open(entry);
  }

  async makeRoom(loading: ModelSlot | undefined, bytes: number): Promise<void> {
    for (const victim of evictionsFor(this.slots.values(), loading, bytes, this.options.budget)) {
      this.metrics.evictions(victim.name);
      await victim.unload('evicted');
    }
    this.metrics.resident(this.slots.values());
  }

  released(): void {
    if (!this.loadsOnDemand) return;
    void this.makeRoom(undefined, 0).catch(() => undefined);
  }

  loaded(slot: ModelSlot, seconds: number): void {
    this.metrics.loadSeconds(slot.name, seconds);
    this.metrics.resident([...this.slots.values(), slot]);
  }
}
