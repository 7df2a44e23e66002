import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layerViolations, PACKAGE_LAYERS, tiffinImports, workspaceSources } from './layers.js';

const root = join(import.meta.dirname, '..', '..');
const packages = workspaceSources(root);

describe('package layers (test/repo/layers.ts)', () => {
  it('sees every package and its imports (no vacuous pass)', () => {
    expect(packages.length).toBeGreaterThanOrEqual(8);
    const cli = packages.find((p) => p.pkg === '@tiffin/cli');
    expect(cli?.files.some((f) => tiffinImports(f.source).includes('@tiffin/core'))).toBe(true);
  });

  it.each(packages.map((p) => [p.pkg, p]))('%s imports only the layers below it', (_name, p) => {
    expect(layerViolations(p.pkg, p.files)).toEqual([]);
  });

  it('refuses a forbidden import, a subpath import and an undeclared package', () => {
    const core = [{ file: 'packages/core/src/x.ts', source: "import { Image } from '@tiffin/io-image';" }];
    expect(layerViolations('@tiffin/core', core)).toEqual([
      { pkg: '@tiffin/core', file: 'packages/core/src/x.ts', imports: '@tiffin/io-image' },
    ]);
    const sub = [{ file: 'a.ts', source: "const m = await import('@tiffin/cli/internal');" }];
    expect(layerViolations('@tiffin/io-json', sub)).toHaveLength(1);
    expect(layerViolations('@tiffin/new-thing', [])).toHaveLength(1);
    expect(PACKAGE_LAYERS['@tiffin/core']).toEqual([]);
  });
});
