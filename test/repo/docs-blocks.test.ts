import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BlockResult, DocRunner } from './doc-runner.js';
import { codeBlocks, documentationFiles } from './markdown.js';
import { removeUserProjects, userProject } from './user-project.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCS = documentationFiles(ROOT);
const results = new Map<string, BlockResult[]>();
let started = 0;

beforeAll(async () => {
  started = Date.now();
  await userProject({ kind: 'esm' }); // packs and installs once, before the per-document clocks start
}, 900_000);

afterAll(async () => {
  const all = [...results.values()].flat();
  const count = (fate: string) => all.filter((r) => r.fate === fate).length;
  // The figures, in the test output.
  console.log(
    `docs blocks: ${all.length} in ${results.size} documents; run ${count('run')}, checked only ${count('check')}, ` +
      `run by another test ${count('run-elsewhere')}, output listings ${count('listing')}; ${Math.round((Date.now() - started) / 1000)} s`,
  );
  // Each block that cannot run here, why, and the test that runs it instead.
  for (const [doc, list] of results)
    for (const r of list.filter((r) => r.fate === 'check' && r.standIn))
      console.log(`  not run here: ${doc}:${r.line} (${r.standIn})`);
  await removeUserProjects();
}, 180_000);

describe('the docs checker', () => {
  it('fails a block that does not type-check, a command that fails and output that differs from the doc', async () => {
    const project = await userProject({ kind: 'esm' });
    const runner = new DocRunner(project, 'broken.md');
    const broken = [
      '```ts',
      "import { Service } from '@tiffin/core';",
      'export default new Service(undefinedName);',
      '```',
      '',
      '```sh',
      'echo hello',
      '# → goodbye',
      '```',
      '',
      '```sh',
      'false',
      '```',
      '',
      '```sh check=docker instead=packages/build/test/containerize.test.ts',
      'docker run --rm no-such-image',
      '```',
      '',
      '```sh check=docker',
      'docker run --rm no-such-image',
      '```',
    ].join('\n');
    await runner.run(codeBlocks(broken));
    expect(runner.results.map((r) => [r.fate, r.problem !== undefined])).toEqual([
      ['run', true],
      ['run', true],
      ['run', true],
      ['check', false],
      ['check', true],
    ]);
    expect(runner.results[4]!.problem).toContain('without `instead=<test>`');
    expect(runner.results[0]!.problem).toContain("Cannot find name 'undefinedName'");
    expect(runner.results[1]!.problem).toContain('the doc shows "goodbye"');
  }, 120_000);
});

describe('every fenced block of README.md, docs/ and the package and example READMEs, as a reader runs it', () => {
  it.each(DOCS)(
    '%s',
    async (doc) => {
      const project = await userProject({ kind: 'esm' });
      const runner = new DocRunner(project, doc);
      await runner.run(codeBlocks(readFileSync(join(ROOT, doc), 'utf8')));
      results.set(doc, runner.results);
      const problems = runner.results.filter((r) => r.problem).map((r) => `${doc}:${r.line}: ${r.problem}`);
      expect(problems.join('\n\n')).toBe('');
    },
    600_000,
  );
});
