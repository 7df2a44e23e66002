import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

describe('the schema-model seam without io-json', () => {
  it('raises MissingDependencyException naming @tiffin/io-json until the package is imported', async () => {
    vi.resetModules();
    const core = await import('@tiffin/core/internal');
    const model = z.object({ a: z.number() });
    expect(() => core.schemaModelAdapterFor(model)).toThrow(core.MissingDependencyException);
    expect(() => core.schemaModelAdapterFor(model)).toThrow(/@tiffin\/io-json/);

    await import('../src/index.js');
    expect(core.schemaModelAdapterFor(model).name).toBe('zod');
  });

  it('with io-json imported, a value that is no schema model is refused with the adapters listed', async () => {
    vi.resetModules();
    const core = await import('@tiffin/core/internal');
    await import('../src/index.js');
    expect(() => core.schemaModelAdapterFor({ not: 'a model' })).toThrow(
      /No schema-model adapter accepts .*registered: zod, standard-schema/,
    );
  });
});
