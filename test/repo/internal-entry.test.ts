import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  exportStars,
  INTERNAL,
  internalImports,
  internalNamesIn,
  unusedInternalNames,
} from './internal-imports.js';
import { exportedNames } from './public-names.js';

const ROOT = join(import.meta.dirname, '..', '..');
const ENTRY = join(ROOT, 'packages/core/src/internal.ts');
const [internalNames] = exportedNames(ENTRY) as [string[]];
const imported = internalImports(ROOT);

/**
 * `@tiffin/core/internal` carries no stability promise, but every name it exports is one more thing a change in
 * core must keep: it exports the names the other workspace packages import from it, listed one by one, and no more.
 */
describe(`${INTERNAL}: the names the workspace imports, no more`, () => {
  it('sees the workspace importing from it (no vacuous pass)', () => {
    expect(imported.size).toBeGreaterThan(50);
    expect(imported.get('BufferedHttpRequest')).toEqual(
      expect.arrayContaining(['packages/io-pandas/test/batching.test.ts', 'bench/src/ndarray-parse.ts']),
    );
    // The module `tiffin build` writes for a stored model imports it from a template string.
    expect(imported.get('deferredModelService')).toEqual(['packages/cli/src/build/model-service-module.ts']);
    expect(internalNames.length).toBeGreaterThan(50);
  });

  it('exports no name that no workspace package imports', () => {
    expect(unusedInternalNames(internalNames, imported)).toEqual([]);
  });

  it('exports every name the workspace imports from it', () => {
    const exported = new Set(internalNames);
    expect([...imported.keys()].filter((name) => !exported.has(name)).sort()).toEqual([]);
  });

  it('lists its names: no `export *`', () => {
    expect(exportStars(ENTRY, readFileSync(ENTRY, 'utf8'))).toEqual([]);
  });

  it('fails on a planted name nobody imports, and on a planted `export *`', () => {
    expect(unusedInternalNames([...internalNames, 'plantedHelper'], imported)).toEqual(['plantedHelper']);
    expect(
      exportStars(
        'x.ts',
        "export * from './a.js';\nexport * as b from './b.js';\nexport { c } from './c.js';",
      ),
    ).toEqual(["export * from './a.js';", "export * as b from './b.js';"]);
  });

  it('reads every way a file takes names from it: named, type, re-export, namespace, dynamic import', () => {
    const source = `
      import { a, type B, c as see } from '${INTERNAL}';
      import type { D } from '${INTERNAL}';
      export { e } from '${INTERNAL}';
      import * as ns from '${INTERNAL}';
      ns.f(ns.G);
      const { h, i: eye } = await import('${INTERNAL}');
      const core = await import('${INTERNAL}');
      core.j();
      const k = (await import('${INTERNAL}')).k;
      type L = import('${INTERNAL}').L;
      // import { commented } from '${INTERNAL}';
      const generated = \`import { m } from '${INTERNAL}';\nexport default m(\${JSON.stringify(1)});\`;
      import { other } from '@tiffin/core';
    `;
    expect(internalNamesIn('x.ts', source).sort()).toEqual(
      ['B', 'D', 'G', 'L', 'a', 'c', 'e', 'f', 'h', 'i', 'j', 'k', 'm'].sort(),
    );
  });
});
