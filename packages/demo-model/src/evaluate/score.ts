import type { SceneSpec } from '../dataset/attributes.js';
import type { SceneReading } from './read-scene.js';

/** The attributes the evaluator scores. */
export const SCORED = ['colour', 'background', 'position', 'shape', 'size'] as const;
export type ScoredAttribute = (typeof SCORED)[number];

/** Fraction of pictures (0..1) whose reading matches the prompt, per attribute. */
export type Accuracy = Record<ScoredAttribute, number>;

/** Tallies readings against the scenes that were asked for. */
export class AccuracyTally {
  private readonly hits: Record<ScoredAttribute, number> = {
    colour: 0,
    background: 0,
    position: 0,
    shape: 0,
    size: 0,
  };
  count = 0;

  add(truth: SceneSpec, reading: SceneReading): void {
    this.count++;
    for (const a of SCORED) if (reading[a] === truth[a]) this.hits[a]++;
  }

  accuracy(): Accuracy {
    const out = {} as Accuracy;
    for (const a of SCORED) out[a] = this.count === 0 ? 0 : this.hits[a] / this.count;
    return out;
  }
}
