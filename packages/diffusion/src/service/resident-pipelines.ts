import { resolve } from 'node:path';
import type { Checkpoint } from './checkpoint-catalog.js';
import { ModelWorkerHost } from './worker-host.js';
import type { WorkerInit } from './worker-protocol.js';

/**
 * The model workers kept loaded, at most `maxLoaded`, least recently used evicted first (Ray Serve's multiplexing,
 * A1111's `sd_checkpoints_limit`). Each worker owns one checkpoint's pipeline and its own LoRA cache. The caller
 * (the generator's queue, one job at a time) acquires a worker only between generations, so the worker evicted
 * never has a generation in flight: a switch waits for the generations ahead of it on the old model. Concurrent
 * acquisitions of one checkpoint share its load.
 */
export class ResidentPipelines {
  /** Loaded (or loading) workers by checkpoint path, least recently used first. */
  private readonly resident = new Map<string, Promise<ModelWorkerHost>>();
  /** The workers that finished loading, by checkpoint path. */
  private readonly ready = new Map<string, ModelWorkerHost>();
  private loadCount = 0;

  constructor(
    private readonly init: WorkerInit,
    readonly maxLoaded: number,
  ) {
    if (!Number.isInteger(maxLoaded) || maxLoaded < 1) throw new RangeError('maxLoaded must be at least 1');
  }

  /** Pipelines loaded since start (the start model's included). */
  get loads(): number {
    return this.loadCount;
  }

  /** The checkpoints whose workers are loaded or loading, least recently used first. */
  get loaded(): string[] {
    return [...this.resident.keys()];
  }

  /** The worker of `checkpoint`, loading it (and evicting the least recently used beyond the bound) if needed. */
  async acquire(checkpoint: Checkpoint): Promise<ModelWorkerHost> {
    const key = checkpoint.path;
    let host = this.resident.get(key);
    if (host) {
      const ready = await host.catch(() => undefined);
      // A worker that crashed or exited is loaded again rather than kept as a dead entry.
      if (ready && ready.failureReason === undefined) {
        this.resident.delete(key);
        this.resident.set(key, host);
        return ready;
      }
      if (this.resident.get(key) === host) this.forget(key);
    }
    await this.evictFor(1);
    // The start model was loaded with every ControlNet; another checkpoint loads those of its family.
    host = ModelWorkerHost.start({
      ...this.init,
      modelDir: key,
      skipUnfitControlNets: key !== resolve(this.init.modelDir),
    });
    this.loadCount++;
    this.resident.set(key, host);
    try {
      const loaded = await host;
      this.ready.set(key, loaded);
      return loaded;
    } catch (err) {
      if (this.resident.get(key) === host) this.forget(key);
      throw err;
    }
  }

  /** Why a loaded worker can no longer generate, or `undefined` while all can. */
  get failureReason(): string | undefined {
    for (const host of this.ready.values()) if (host.failureReason !== undefined) return host.failureReason;
    return undefined;
  }

  /** Stop every worker (each lets its running job finish). */
  async close(): Promise<void> {
    const hosts = [...this.resident.values()];
    this.resident.clear();
    this.ready.clear();
    await Promise.all(hosts.map(async (h) => (await h.catch(() => undefined))?.close()));
  }

  /** Stop least recently used workers until `room` more fit under the bound. */
  private async evictFor(room: number): Promise<void> {
    while (this.resident.size + room > this.maxLoaded) {
      const [key, host] = this.resident.entries().next().value as [string, Promise<ModelWorkerHost>];
      this.forget(key);
      await (await host.catch(() => undefined))?.close();
    }
  }

  private forget(key: string): void {
    this.resident.delete(key);
    this.ready.delete(key);
  }
}
