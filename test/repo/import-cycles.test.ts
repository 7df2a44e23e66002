import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const sources = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name, 'src'))
  .filter((dir) => existsSync(dir));

/**
 * An import cycle between modules makes their evaluation order depend on which one is imported first (a
 * class or constant can be undefined when the other module runs), and bundlers order the chunk differently
 * from tsx/vitest. `import type` statements count too: they are erased at run time, but a type cycle is the
 * same tangle of concepts (two modules that each need the other), and it turns into a value cycle the day
 * one side imports a value.
 */
describe('no import cycles in packages/*/src', () => {
  it.each(sources.map((dir) => [dir.slice(root.length + 1), dir]))('%s', async (_name, dir) => {
    const graph = await madge(dir, {
      fileExtensions: ['ts', 'mts'],
      detectiveOptions: { ts: { skipTypeImports: false }, es6: { skipTypeImports: false } },
    });
    // Guards against a vacuous pass: the graph has edges between the package's own files.
    expect(Object.values(graph.obj()).some((deps) => deps.length > 0)).toBe(true);
    expect(graph.circular()).toEqual([]);
  });
});
