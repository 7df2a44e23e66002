import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, shellCommands, shellWords } from './markdown.js';
import { answers, freePort, ServerProcess } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Inside the checkout (so `@tiffin/core` resolves as it does for a reader's service.ts), ignored by git.
const WORK = join(ROOT, '.tmp', `readme-sample-${process.pid}`);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SAMPLE = codeBlocks(README).find((b) => b.lang === 'ts' && b.text.includes('new Service('));

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

function writeSample(): string {
  if (!SAMPLE) throw new Error('README.md has no ```ts block with a Service');
  mkdirSync(WORK, { recursive: true });
  const file = join(WORK, 'service.ts');
  writeFileSync(file, SAMPLE.text);
  return file;
}

describe("README's TypeScript sample", () => {
  it('compiles with tsc against the workspace types (strict, the repository tsconfig)', () => {
    const file = writeSample();
    const config = ts.readConfigFile(join(ROOT, 'tsconfig.base.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram([file], { ...parsed.options, noEmit: true });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ({
      file: d.file ? d.file.fileName.replace(ROOT, '') : undefined,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }));
    expect(diagnostics).toEqual([]);
  }, 120_000);

  it('serves as the README says: `npx tiffin serve service.ts`, one good and one bad request', async () => {
    writeSample();
    const serveLine = codeBlocks(README)
      .flatMap((b) => (b.lang === 'sh' ? shellCommands(b.text) : []))
      .find((line) => /^npx tiffin serve service\.ts( |$)/.test(line));
    expect(serveLine).toBeDefined();
    // The README's own words, run by the same launcher npx finds; only the port is a free one.
    const args = shellWords(serveLine!).slice(2);
    const port = await freePort();
    const portAt = args.indexOf('--port');
    if (portAt >= 0) args[portAt + 1] = String(port);
    else args.push('--port', String(port));
    const server = new ServerProcess(process.execPath, [join(ROOT, 'packages/cli/bin/tiffin.js'), ...args], {
      cwd: WORK,
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await server.ready(`${url}/readyz`, 90_000);
      const good = await fetch(`${url}/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          [5.1, 3.5, 1.4, 0.2],
          [6.7, 3.0, 5.2, 2.3],
        ]),
      });
      expect(good.status).toBe(200);
      expect(await good.json()).toEqual([0, 2]);
      const bad = await fetch(`${url}/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '[[1, 2, 3]]',
      });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ type: 'BadInput' });
      server.child.kill('SIGTERM');
      expect(await server.exitsWithin(20_000)).toBe(true);
      expect(await answers(`${url}/livez`)).toBe(false);
    } finally {
      server.kill();
    }
  }, 150_000);
});
