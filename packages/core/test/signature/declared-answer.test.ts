import { describe, expect, it } from 'vitest';
import { NDArray } from '../../src/index.js';
import { declaredAnswerElements } from '../../src/signature/declared-answer.js';
import { checkEmptyDimensions } from '../../src/signature/empty-dimensions.js';
import type { ModelSignature, TensorSpec } from '../../src/signature/signature.js';

const f32 = (name: string, shape: number[], dimNames?: (string | null)[]): TensorSpec => ({
  name,
  dtype: 'float32',
  shape,
  ...(dimNames ? { dimNames } : {}),
});
const zeros = (shape: number[]) => NDArray.zeros(shape, 'float32');

describe('declaredAnswerElements: the values an answer holds at least, from the declared outputs', () => {
  it('a batchable model: the batch dimension is the rows sent, fixed dimensions as declared', () => {
    const linear: ModelSignature = {
      inputs: [f32('x', [-1, 4])],
      outputs: [f32('y', [-1, 3])],
      batchable: true,
      batch_dim: 0,
    };
    expect(declaredAnswerElements(linear, { x: zeros([1000, 4]) })).toBe(3000);
    expect(declaredAnswerElements(linear, { x: zeros([0, 4]) })).toBe(0);
  });

  it('a symbolic dimension shared by name with an input is that input’s size, wherever it stands', () => {
    const transposed: ModelSignature = {
      inputs: [f32('x', [-1, -1], ['rows', 'cols'])],
      outputs: [f32('t', [-1, -1], ['cols', 'rows']), f32('scale', [2])],
      batchable: false,
      batch_dim: 0,
    };
    expect(declaredAnswerElements(transposed, { x: zeros([7, 5]) })).toBe(35 + 2);
  });

  it('an output with a dimension nothing decides counts 0 (it may be empty); others still count', () => {
    const widen: ModelSignature = {
      inputs: [f32('x', [-1, -1], ['batch', 'n'])],
      outputs: [f32('y', [-1, -1], ['batch', 'wide']), f32('norms', [-1], ['batch'])],
      batchable: true,
      batch_dim: 0,
    };
    expect(declaredAnswerElements(widen, { x: zeros([10, 4]) })).toBe(10);
    // Without names (TF.js) and not batchable, only fixed shapes say anything.
    const unnamed: ModelSignature = {
      inputs: [f32('x', [-1, 4]), f32('sr', [])],
      outputs: [f32('y', [-1, 3]), f32('state', [2, 64])],
      batchable: false,
      batch_dim: 0,
    };
    expect(declaredAnswerElements(unnamed, { x: zeros([10, 4]), sr: zeros([]) })).toBe(128);
  });
});

describe('checkEmptyDimensions: size 0 only along the batch dimension of a batchable model', () => {
  const image: ModelSignature = {
    inputs: [f32('x', [-1, 3, -1, -1])],
    outputs: [f32('y', [-1, 2, -1, -1])],
    batchable: true,
    batch_dim: 0,
  };

  it('takes an empty batch, refuses an empty height or width naming the input and the dimension', () => {
    expect(() => checkEmptyDimensions('conv', image, { x: zeros([0, 3, 4, 4]) })).not.toThrow();
    expect(() => checkEmptyDimensions('conv', image, { x: zeros([1, 3, 1, 0]) })).toThrow(
      expect.objectContaining({
        code: 'TENSOR_EMPTY_DIMENSION',
        message: expect.stringMatching(/input 'x' has size 0 in dimension 3/),
      }),
    );
  });

  it('a model that is not batchable takes no empty dimension at all', () => {
    const audio: ModelSignature = {
      inputs: [f32('x', [-1]), f32('sr', [])],
      outputs: [f32('y', [-1])],
      batchable: false,
      batch_dim: 0,
    };
    expect(() => checkEmptyDimensions('vad', audio, { x: zeros([0]), sr: zeros([]) })).toThrow(
      expect.objectContaining({ code: 'TENSOR_EMPTY_DIMENSION' }),
    );
    expect(() => checkEmptyDimensions('vad', audio, { x: zeros([16]), sr: zeros([]) })).not.toThrow();
  });
});
