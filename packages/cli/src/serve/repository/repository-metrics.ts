import type { Service } from '@tiffin/core';
import type { ModelSlot } from './model-slot.js';

/** The repository's metrics per model on `/metrics` (docs/model-repository.md, metrics). */
export interface RepositoryMetrics {
  loads(model: string): void;
  evictions(model: string): void;
  loadSeconds(model: string, seconds: number): void;
  /** Set every model's resident bytes (0 when not resident). */
  resident(slots: Iterable<ModelSlot>): void;
}

export function repositoryMetrics(service: Service): RepositoryMetrics {
  const loads = service.counter('model_loads_total', 'Model loads started, by model', ['model']);
  const evictions = service.counter(
    'model_evictions_total',
    'Idle models evicted to stay within the budget',
    ['model'],
  );
  const seconds = service.counter('model_load_seconds_total', 'Seconds spent loading models, by model', [
    'model',
  ]);
  const bytes = service.gauge('model_resident_bytes', "Bytes of a resident model's files (0: not resident)", [
    'model',
  ]);
  return {
    loads: (model) => loads([model]),
    evictions: (model) => evictions([model]),
    loadSeconds: (model, s) => seconds([model], s),
    resident: (slots) => {
      for (const slot of slots) bytes([slot.name], slot.residentBytes);
    },
  };
}
