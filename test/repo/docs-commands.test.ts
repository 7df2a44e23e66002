import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { codeBlocks, documentationFiles, inlineCode, shellCommands, shellWords } from './markdown.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LAUNCHER = join(ROOT, 'packages/cli/bin/tiffin.js');
/** The one pnpm a reader can run without installing anything: fetched by npx, pinned like packageManager. */
const PNPM = 'pnpm@10.34.9';
const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'text', '']);

const docs = () => documentationFiles(ROOT);

/** `a && b | c; d` → each simple command's words. */
function simpleCommands(line: string): string[][] {
  const words = shellWords(line);
  const out: string[][] = [[]];
  for (const w of words) {
    if (['&&', '||', ';', '|'].includes(w)) out.push([]);
    else out[out.length - 1].push(w);
  }
  return out.filter((c) => c.length > 0);
}

function scriptsOf(doc: string): Record<string, string> {
  // A package README's `npm run x` may mean that package's script or the root's.
  const read = (file: string) =>
    existsSync(file)
      ? ((JSON.parse(readFileSync(file, 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {})
      : {};
  return { ...read(join(ROOT, 'package.json')), ...read(join(ROOT, dirname(doc), 'package.json')) };
}

const run = promisify(execFile);

/** `tiffin [group] --help`, read by the command itself (through the same launcher `npx tiffin` runs). */
async function cliCommands(group?: string): Promise<Set<string>> {
  const { stdout } = await run(process.execPath, [LAUNCHER, ...(group ? [group] : []), '--help'], {
    cwd: ROOT,
    timeout: 60_000,
  });
  const section = stdout.slice(stdout.indexOf('Commands:'));
  return new Set([...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]));
}

interface Problem {
  doc: string;
  command: string;
  problem: string;
}

/** A project `npx tiffin init` writes has these npm scripts (every template's package.json starts from them). */
const INIT_SCRIPTS = (
  JSON.parse(readFileSync(join(ROOT, 'packages/cli/templates/common/package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts;

/** A block's commands; after `npx tiffin init <dir>` and `cd <dir>`, npm scripts are that project's. */
function blockCommands(text: string): Array<{ line: string; scripts?: Record<string, string> }> {
  let initDir: string | undefined;
  let inProject = false;
  return shellCommands(text).map((line) => {
    initDir = /^npx tiffin init ([^\s-]\S*)/.exec(line)?.[1] ?? initDir;
    if (initDir && line.trim() === `cd ${initDir}`) inProject = true;
    return { line, scripts: inProject ? INIT_SCRIPTS : undefined };
  });
}

async function check(
  doc: string,
  command: string,
  commands: Map<string, Set<string>>,
  scripts: Record<string, string> = scriptsOf(doc),
): Promise<Problem[]> {
  const problems: Problem[] = [];
  const bad = (problem: string) => problems.push({ doc, command, problem });
  for (const words of simpleCommands(command)) {
    const [first, ...rest] = words;
    if (first === 'tiffin') bad('`tiffin` is not on PATH after the install: write `npx tiffin`');
    else if (first === 'pnpm')
      bad(`pnpm is not on PATH on a fresh machine: write \`npx -y ${PNPM}\` or \`npm run\``);
    else if (first === 'npx') {
      const yes = rest[0] === '-y' || rest[0] === '--yes';
      const [tool, ...args] = yes ? rest.slice(1) : rest;
      if (yes) {
        if (tool !== PNPM) bad(`npx -y fetches ${tool}; only ${PNPM} is pinned for readers`);
        const script = args.find((a, i) => !a.startsWith('-') && !['--filter', '-F'].includes(args[i - 1]));
        const builtins = ['install', 'add', 'exec', 'run', 'dlx', 'store', 'why', 'list'];
        if (script && !script.startsWith('<') && !builtins.includes(script) && !(script in scriptsOf(doc)))
          bad(`no script '${script}'`);
      } else if (tool === 'tiffin' || tool === '@tiffin/cli') {
        const [sub, subsub] = args.filter(
          (a) => !a.startsWith('-') && !a.startsWith('<') && !a.startsWith('['),
        );
        const top = commands.get('') ?? new Set();
        if (sub && !args[0].startsWith('-') && !top.has(sub)) bad(`tiffin has no command '${sub}'`);
        const group = sub ? commands.get(sub) : undefined;
        if (group && group.size > 0 && subsub && !group.has(subsub.split('|')[0]))
          bad(`tiffin ${sub} has no '${subsub}'`);
      } else if (!existsSync(join(ROOT, 'node_modules/.bin', tool))) {
        bad(`npx ${tool}: not a dev dependency of the repository (npx would fetch it)`);
      }
    } else if (first === 'npm' && (rest[0] === 'run' || rest[0] === 'start' || rest[0] === 'test')) {
      const script = rest[0] === 'run' ? rest[1] : rest[0];
      if (!(script in scripts)) bad(`no script '${script}' for \`npm ${rest.join(' ')}\``);
      // turbo finds the package manager on PATH, and a fresh machine has no pnpm there.
      else if (/\bturbo\b/.test(scripts[script]))
        bad(`'${script}' runs turbo, which needs pnpm: npx -y pnpm@10.34.9`);
    }
  }
  return problems;
}

describe('commands in README.md, docs/ and package READMEs', () => {
  it('say where `npx tiffin` works and what reaches Tiffin from anywhere (`npx @tiffin/cli`)', () => {
    // npx resolves a bare `tiffin` outside a project that installed @tiffin/cli to another package on the registry.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const project = readFileSync(join(ROOT, 'docs/your-project.md'), 'utf8');
    expect(readme).toContain('npx @tiffin/cli');
    expect(readme).toContain('docs/your-project.md#the-tiffin-command');
    expect(project).toMatch(/^## The `tiffin` command$/m);
    expect(project).toContain('npx @tiffin/cli');
  });

  it('use the one spelling that works after the README install (npx tiffin, npm run, npx -y pnpm@…)', async () => {
    const commands = new Map<string, Set<string>>();
    const [top, diffusion, models] = await Promise.all([
      cliCommands(),
      cliCommands('diffusion'),
      cliCommands('models'),
    ]);
    commands.set('', top).set('diffusion', diffusion).set('models', models);
    expect(top).toContain('serve');
    expect(diffusion).toContain('start');

    const problems: Problem[] = [];
    let checked = 0;
    for (const doc of docs()) {
      const markdown = readFileSync(join(ROOT, doc), 'utf8');
      const lines = [
        ...codeBlocks(markdown)
          .filter((b) => SHELL_LANGS.has(b.lang))
          .flatMap((b) => blockCommands(b.text)),
        ...inlineCode(markdown)
          .filter((span) => /^(?:tiffin|pnpm|npx|npm) /.test(span))
          .map((line) => ({ line, scripts: undefined })),
      ];
      for (const { line, scripts } of lines) {
        let words: string[];
        try {
          words = shellWords(line);
        } catch {
          continue; // not a command (an unbalanced quote in prose or program output)
        }
        if (!['tiffin', 'pnpm', 'npx', 'npm'].some((c) => words.includes(c))) continue;
        checked++;
        problems.push(...(await check(relative(ROOT, join(ROOT, doc)), line, commands, scripts)));
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  }, 120_000);
});
