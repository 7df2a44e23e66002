import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks } from '../markdown.js';
import { run } from '../packages.js';
import { freePort, readerEnv, ServerProcess } from '../server-process.js';
import {
  linkInstall,
  npmInstall,
  scratchFolder,
  tiffinTarballs,
  type UserProject,
  userProject,
} from '../user-project.js';

/**
 * `tiffin init` as a reader runs it, with the CLI installed by npm from the tarballs: each template's project
 * passes `npm test` and its `typecheck` script (tsc), `npm start` serves it, and every call in its README prints what the README
 * says it prints. The quickstart project runs `npm install` itself, on the package.json init wrote (it points at
 * the tarballs the CLI was installed from, with install scripts, as its README says for an offline machine); the
 * other templates link the shared install to keep CI short.
 */

const TEMPLATES = ['quickstart', 'image', 'dataframe', 'diffusion'] as const;
let host: UserProject;

beforeAll(async () => {
  host = await userProject({ kind: 'bare' });
}, 900_000);

/** A README command and the lines it says it prints (`# …` right after it). */
interface Call {
  command: string;
  expected: string[];
}

/**
 * The README's shell commands that call the running service. npm install/test/start are run by the test
 * itself; the port is the test's free one instead of 3000 (the only change to the README's lines).
 */
function readmeCalls(readme: string, port: number): Call[] {
  const calls: Call[] = [];
  for (const block of codeBlocks(readme).filter((b) => b.lang === 'sh')) {
    for (const line of block.text.split('\n')) {
      if (line.startsWith('# ')) calls.at(-1)?.expected.push(line.slice(2));
      else if (
        line.trim() &&
        !/^(ONNXRUNTIME_NODE_INSTALL=skip )?npm (install|test|start)$/.test(line.trim())
      )
        calls.push({ command: line.replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`), expected: [] });
    }
  }
  return calls;
}

async function npm(dir: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const { stdout, stderr } = await run('npm', args, {
    cwd: dir,
    env: readerEnv(env),
    timeout: 300_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout + stderr;
}

describe('tiffin init', () => {
  it.each(TEMPLATES)(
    '--template %s: npm test passes, npm start serves, the README calls answer as written',
    async (template) => {
      const dir = scratchFolder(template);
      // The command the docs give for anywhere (`npx @tiffin/cli`), here finding the installed CLI.
      const out = await run('npx', ['@tiffin/cli', 'init', dir, '--template', template], {
        cwd: host.dir,
        env: host.env(),
      });
      expect(out.stdout).toContain('npm install');
      if (template === 'quickstart') {
        // As init wrote it: the packages are not on the registry, so it points at the tarballs the CLI came from.
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
          dependencies: Record<string, string>;
          overrides: Record<string, string>;
        };
        const cli = (await tiffinTarballs()).get('@tiffin/cli')!;
        expect(manifest.dependencies['@tiffin/cli']).toBe(`file:${cli}`);
        expect(manifest.overrides['@tiffin/build']).toMatch(/^file:.*tiffin-build-.*\.tgz$/);
        expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('not on the npm registry yet');
        expect(out.stdout).toContain('the @tiffin packages are the tarballs in');
        await npmInstall(dir);
      } else {
        await linkInstall(dir);
      }
      const tested = await npm(dir, ['test']);
      expect(tested).toMatch(/# fail 0/);
      expect(tested).not.toMatch(/# pass 0\b/);
      await npm(dir, ['run', 'typecheck']);

      const port = await freePort();
      const server = new ServerProcess('npm', ['start'], {
        cwd: dir,
        env: readerEnv({ PORT: String(port), TIFFIN_URL: `http://127.0.0.1:${port}` }),
        detached: true,
      });
      try {
        await server.ready(`http://127.0.0.1:${port}/readyz`, 120_000);
        const calls = readmeCalls(readFileSync(join(dir, 'README.md'), 'utf8'), port);
        expect(calls.length).toBeGreaterThanOrEqual(3);
        for (const call of calls) {
          const { stdout } = await run('sh', ['-c', call.command], {
            cwd: dir,
            env: readerEnv({ TIFFIN_URL: `http://127.0.0.1:${port}` }),
            timeout: 120_000,
          });
          expect(stdout.trimEnd(), call.command).toBe(call.expected.join('\n'));
        }
      } finally {
        server.kill();
      }
    },
    900_000,
  );

  it('refuses a folder that has files, and a template that does not exist, in one line each', async () => {
    const dir = scratchFolder('taken');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const fails = (args: string[]) =>
      run(host.bin('tiffin'), args, { cwd: host.dir, env: host.env() }).then(
        () => '',
        (err: { stderr: string }) => err.stderr,
      );
    expect(await fails(['init', dir])).toMatch(/^tiffin: error: .*is not empty.*\n$/);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
    expect(await fails(['init', scratchFolder('none'), '--template', 'nope'])).toContain('quickstart');
  }, 60_000);
});
