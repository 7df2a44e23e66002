import seedrandom from 'seedrandom';
import {
  BACKGROUND_NAMES,
  COLOUR_NAMES,
  POSITION_NAMES,
  type SceneSpec,
  SHAPES,
  SIZE_NAMES,
} from './attributes.js';
import { type Jitter, MAX_JITTER } from './render.js';

/** Every combination of shape × colour × size × position × background (4·8·3·9·3 = 2592), in a fixed order. */
export function allScenes(): SceneSpec[] {
  const out: SceneSpec[] = [];
  for (const shape of SHAPES)
    for (const colour of COLOUR_NAMES)
      for (const size of SIZE_NAMES)
        for (const position of POSITION_NAMES)
          for (const background of BACKGROUND_NAMES) out.push({ shape, colour, size, position, background });
  return out;
}

/** Number of held-out combinations: never shown in training, used by the evaluator. */
export const HELD_OUT_COUNT = 128;
const SPLIT_SEED = 'tiffin-demo-split-1';

export interface SceneSplit {
  train: SceneSpec[];
  heldOut: SceneSpec[];
}

/** A fixed-seed split of all combinations into training and held-out prompts. */
export function splitScenes(): SceneSplit {
  const scenes = allScenes();
  const rng = seedrandom(SPLIT_SEED);
  // Fisher–Yates on indices with the seeded generator: the same split on every machine.
  const idx = scenes.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  const held = new Set(idx.slice(0, HELD_OUT_COUNT));
  return {
    train: scenes.filter((_, i) => !held.has(i)),
    heldOut: idx.slice(0, HELD_OUT_COUNT).map((i) => scenes[i]),
  };
}

/** `count` random offsets per scene from a seeded generator (the first is always none). */
export function jitters(count: number, seed: string): () => Jitter {
  const rng = seedrandom(seed);
  let k = 0;
  const r = () => Math.round((rng() * 2 - 1) * MAX_JITTER);
  return () => (k++ % count === 0 ? { dx: 0, dy: 0, ds: 0 } : { dx: r(), dy: r(), ds: r() });
}
