import type { PositionName, SceneSpec, SizeName } from '../dataset/attributes.js';

/**
 * How people say what the captions say, in words the training captions never use: sizes (big, huge, tiny, little),
 * places (center, middle, upper, lower, "on the left side"), "gray". The evaluator asks for held-out scenes in
 * these words too, so a figure on them measures phrasings the model was never trained on.
 */
const SIZE_WORDS: Readonly<Record<SizeName, readonly string[]>> = {
  small: ['tiny', 'little'],
  medium: ['medium'],
  large: ['big', 'huge'],
};

function placePhrases(p: PositionName): readonly string[] {
  if (p === 'centre') return ['in the center', 'in the middle'];
  if (p === 'left' || p === 'right') return [`on the ${p} side`];
  // "upper left", "lower right"; the top and bottom edges keep their words ("at the upper" is not English).
  return [`at the ${p.includes(' ') ? p.replace('top', 'upper').replace('bottom', 'lower') : p}`];
}

/** The `k`-th people's phrasing of a scene (k cycles through each word's variants independently). */
export function paraphrase(s: SceneSpec, k: number): string {
  const pick = <T>(xs: readonly T[], salt: number) => xs[(k + salt) % xs.length];
  const size = pick(SIZE_WORDS[s.size], 0);
  const place = pick(placePhrases(s.position), 1);
  const background = s.background === 'grey' ? 'gray' : s.background;
  return `a ${size} ${s.colour} ${s.shape} ${place} on a ${background} background`;
}
