import { describe, expect, it } from 'vitest';
import { type LoadedModel, modelService, type NDArray } from '../../src/index.js';

/**
 * A zero-code model with `cache` (docs/cache.md, zero-code models): its API is cached with the model's tag as the
 * key's version; a batched model is refused with a message that says what to do.
 */
function identity(batchable: boolean, tag?: string): LoadedModel {
  return {
    name: 'identity',
    tag,
    module: 'test',
    classes: undefined,
    metadata: {},
    instances: 1,
    signature: {
      inputs: [{ name: 'x', dtype: 'float32', shape: [-1, 2] }],
      outputs: [{ name: 'y', dtype: 'float32', shape: [-1, 2] }],
      batchable,
      batch_dim: 0,
    },
    async run(inputs) {
      return { y: inputs.x as NDArray };
    },
    async close() {},
  };
}

describe('modelService with cache', () => {
  it("caches the model's API, the model's tag joining the key", () => {
    const svc = modelService(identity(false, 'identity:3'), { cache: { ttl: 30 } });
    const api = svc.apis.get('identity');
    expect(api?.cache?.ttlMs).toBe(30_000);
    expect(api?.cache?.version).toBe('identity:3');
  });

  it('refuses a batched model, naming --no-batching', () => {
    expect(() => modelService(identity(true), { cache: true })).toThrow(/--no-batching/);
    expect(
      modelService(identity(true), { cache: true, batching: false }).apis.get('identity')?.cache,
    ).toBeDefined();
  });
});
