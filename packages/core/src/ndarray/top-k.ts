import { formatShape } from './dtype.js';
import type { NDArray } from './ndarray.js';

/** One class of a classification result. */
export interface LabelScore {
  label: string;
  /** The model's score, or its softmax when `softmax` is set. */
  score: number;
  /** Position of the class in the model's output (and in the labels). */
  index: number;
}

export interface TopKOptions {
  /** How many classes per row (at most the number of classes). Default 5. */
  k?: number;
  /** Turn the row's scores (logits) into probabilities first. Default false. */
  softmax?: boolean;
}

function rowValues(scores: NDArray, row: number, classes: number): number[] {
  const data = scores.data as ArrayLike<number | bigint>;
  const values = new Array<number>(classes);
  for (let i = 0; i < classes; i++) values[i] = Number(data[row * classes + i]);
  return values;
}

function softmaxOf(values: number[]): number[] {
  const max = Math.max(...values);
  const exp = values.map((v) => Math.exp(v - max));
  const sum = exp.reduce((a, b) => a + b, 0);
  return exp.map((e) => e / sum);
}

/**
 * Classification scores → the `k` best labels of each row, best first. `scores` is `[classes]` (one row) or
 * `[rows, classes]`, any numeric dtype; `labels` names the classes in output order (a model's stored labels;
 * class indices as strings where it has none).
 */
export function topK(
  scores: NDArray,
  labels: readonly string[] | undefined,
  options: TopKOptions = {},
): LabelScore[][] {
  if (scores.shape.length !== 1 && scores.shape.length !== 2) {
    throw new RangeError(
      `topK: scores must be [classes] or [rows, classes], got ${formatShape(scores.shape)}`,
    );
  }
  if (scores.dtype === 'str' || scores.dtype === 'object')
    throw new TypeError('topK: scores must be numeric');
  const classes = scores.shape[scores.shape.length - 1]!;
  const rows = scores.shape.length === 1 ? 1 : scores.shape[0]!;
  if (labels && labels.length !== classes) {
    throw new RangeError(`topK: ${labels.length} labels for ${classes} classes`);
  }
  const k = Math.min(options.k ?? 5, classes);
  if (!Number.isInteger(k) || k < 1)
    throw new RangeError(`topK: k must be a positive integer, got ${options.k}`);
  const result: LabelScore[][] = [];
  for (let row = 0; row < rows; row++) {
    const raw = rowValues(scores, row, classes);
    const values = options.softmax ? softmaxOf(raw) : raw;
    const order = values.map((_, i) => i).sort((a, b) => values[b]! - values[a]! || a - b);
    result.push(
      order
        .slice(0, k)
        .map((index) => ({ label: labels?.[index] ?? String(index), score: values[index]!, index })),
    );
  }
  return result;
}
