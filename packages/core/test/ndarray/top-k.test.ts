import { describe, expect, it } from 'vitest';
import { NDArray, topK } from '../../src/index.js';

describe('topK', () => {
  const labels = ['cat', 'dog', 'fox', 'owl'];

  it('ranks each row best first, with labels and indices', () => {
    const scores = NDArray.from(
      [
        [0.1, 0.6, 0.05, 0.25],
        [0.7, 0.1, 0.15, 0.05],
      ],
      'float32',
    );
    const [first, second] = topK(scores, labels, { k: 2 });
    expect(first!.map((r) => r.label)).toEqual(['dog', 'owl']);
    expect(first![0]!.index).toBe(1);
    expect(first![0]!.score).toBeCloseTo(0.6, 6);
    expect(second!.map((r) => r.label)).toEqual(['cat', 'fox']);
  });

  it('turns logits into probabilities on request', () => {
    const [row] = topK(NDArray.from([2, 1, 0, -1], 'float64'), labels, { k: 4, softmax: true });
    const total = row!.reduce((s, r) => s + r.score, 0);
    expect(total).toBeCloseTo(1, 12);
    expect(row![0]!.score / row![1]!.score).toBeCloseTo(Math.E, 10);
  });

  it('names classes by index without labels, caps k, breaks ties by position, reads int64', () => {
    const [row] = topK(NDArray.from([3n, 7n, 7n], 'int64'), undefined, { k: 10 });
    expect(row!.map((r) => r.label)).toEqual(['1', '2', '0']);
  });

  it('refuses scores it cannot rank', () => {
    expect(() => topK(NDArray.from([[[1]]], 'float32'), undefined)).toThrow(/\[rows, classes\]/);
    expect(() => topK(NDArray.from([1, 2], 'float32'), labels)).toThrow(/4 labels for 2 classes/);
    expect(() => topK(NDArray.from([1, 2], 'float32'), undefined, { k: 0 })).toThrow(/positive integer/);
    expect(() => topK(NDArray.from(['a'], 'str'), undefined)).toThrow(/numeric/);
  });
});
