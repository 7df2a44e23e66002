import { expect, it } from 'vitest';
import { boundedProgress, MAX_DETAIL_BYTES } from '../../src/tasks/runner/progress-detail.js';

it('hands a store a step with its detail, or without one over the bound or not JSON', () => {
  const small = { step: 1, totalSteps: 4, detail: { preview: 'x'.repeat(100) } };
  expect(boundedProgress(small)).toEqual(small);
  const large = { step: 2, totalSteps: 4, detail: { preview: 'x'.repeat(MAX_DETAIL_BYTES) } };
  expect(boundedProgress(large)).toEqual({ step: 2, totalSteps: 4 });
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  expect(boundedProgress({ step: 3, totalSteps: null, detail: cyclic })).toEqual({
    step: 3,
    totalSteps: null,
  });
  expect(boundedProgress({ step: 4, totalSteps: 4, detail: { n: 1n } })).toEqual({ step: 4, totalSteps: 4 });
});
