import type { ModelSlot } from './model-slot.js';

/** `--max-loaded-models` and `--models-memory`: whichever binds first (docs/model-repository.md, residency). */
export interface ResidencyBudget {
  readonly maxModels?: number;
  readonly maxBytes?: number;
}

/**
 * Least-recently-used residency: before a model loads (`loading`; undefined once a call ends, to restore a
 * budget passed while every model was busy), idle resident models (no call running on them) are
 * evicted, oldest call first, until the new one fits both bounds. A model in use is never evicted, so while every
 * resident model is busy the budget is passed rather than a call failed; a model larger than the whole memory
 * budget still loads, alone.
 */
export function evictionsFor(
  slots: Iterable<ModelSlot>,
  loading: ModelSlot | undefined,
  bytes: number,
  budget: ResidencyBudget,
): ModelSlot[] {
  const resident = [...slots].filter((s) => s !== loading && s.isResident);
  let count = resident.length + (loading ? 1 : 0);
  let total = resident.reduce((sum, s) => sum + s.residentBytes, 0) + bytes;
  const fits = () =>
    (budget.maxModels === undefined || count <= budget.maxModels) &&
    (budget.maxBytes === undefined || total <= budget.maxBytes);
  const out: ModelSlot[] = [];
  for (const slot of resident.filter((s) => s.idle).sort((a, b) => a.lastUsed - b.lastUsed)) {
    if (fits()) break;
    out.push(slot);
    count--;
    total -= slot.residentBytes;
  }
  return out;
}
