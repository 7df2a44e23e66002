import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No source file over 500 lines: a longer one holds more than one concept and is split by concept (CONTRIBUTING.md,
 * "one concept a file"), not cut at a line. Counted: every script under `packages/<pkg>/src` and the generation
 * page's own script (`packages/<pkg>/ui`, served as it is, no build step).
 */
const MOST_LINES = 500;

/**
 * The files over the limit when this check came, each with its line count then as its ceiling: one may shrink,
 * never grow, and leaves this list once it is at 500 lines or fewer (the check fails until it is taken off), so
 * the list only shrinks. Never add a file to it: split the file.
 */
const OVER_THE_LIMIT: Readonly<Record<string, number>> = {};

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = /\.(c|m)?[jt]sx?$/;

/** The scripts below `dir` (none when it does not exist), as paths from the repository root. */
function scripts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : scripts(path);
    return SCRIPT.test(entry.name) ? [relative(ROOT, path).split('\\').join('/')] : [];
  });
}

/** Lines as `wc -l` counts them in a file that ends with a newline. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** What is wrong with these line counts: a file over the limit and not allowed, grown past its ceiling, or listed but no longer over. */
function sizeProblems(
  counts: ReadonlyMap<string, number>,
  allowed: Readonly<Record<string, number>>,
  most = MOST_LINES,
): string[] {
  const problems: string[] = [];
  for (const [file, lines] of counts) {
    const ceiling = allowed[file];
    if (ceiling === undefined) {
      if (lines > most) problems.push(`${file}: ${lines} lines, over ${most}: split it by concept`);
    } else if (lines > ceiling) {
      problems.push(
        `${file}: ${lines} lines, grown past its ceiling of ${ceiling}: split it, do not grow it`,
      );
    }
  }
  for (const [file, ceiling] of Object.entries(allowed)) {
    const lines = counts.get(file);
    if (lines === undefined) problems.push(`${file}: on the allow-list (${ceiling}) but gone: take it off`);
    else if (lines <= most)
      problems.push(`${file}: ${lines} lines now, within ${most}: take it off the allow-list`);
  }
  return problems;
}

function workspaceCounts(): Map<string, number> {
  const packages = join(ROOT, 'packages');
  const files = readdirSync(packages, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [
      ...scripts(join(packages, entry.name, 'src')),
      ...scripts(join(packages, entry.name, 'ui')),
    ]);
  return new Map(files.map((file) => [file, lineCount(readFileSync(join(ROOT, file), 'utf8'))]));
}

describe(`no source file over ${MOST_LINES} lines`, () => {
  const counts = workspaceCounts();

  it('sees the sources of every package and the script of the page (no vacuous pass)', () => {
    expect(counts.size).toBeGreaterThan(300);
    expect(counts.has('packages/core/src/index.ts')).toBe(true);
    expect(counts.has('packages/diffusion/ui/app.js')).toBe(true);
  });

  it('counts lines as wc -l does', () => {
    expect([lineCount(''), lineCount('a\n'), lineCount('a\nb'), lineCount('a\nb\n')]).toEqual([0, 1, 2, 2]);
  });

  it('refuses a new long file, a listed file that grew and a listed file that no longer needs the list', () => {
    const counts = new Map([
      ['packages/x/src/long.ts', 501],
      ['packages/x/src/grown.ts', 620],
      ['packages/x/src/shrunk.ts', 480],
      ['packages/x/src/ok.ts', 500],
    ]);
    const allowed = {
      'packages/x/src/grown.ts': 600,
      'packages/x/src/shrunk.ts': 700,
      'packages/x/src/gone.ts': 900,
    };
    expect(sizeProblems(counts, allowed)).toEqual([
      'packages/x/src/long.ts: 501 lines, over 500: split it by concept',
      'packages/x/src/grown.ts: 620 lines, grown past its ceiling of 600: split it, do not grow it',
      'packages/x/src/shrunk.ts: 480 lines now, within 500: take it off the allow-list',
      'packages/x/src/gone.ts: on the allow-list (900) but gone: take it off',
    ]);
  });

  it(`every file in packages/*/src and the page is within ${MOST_LINES} lines, or on the shrinking allow-list`, () => {
    expect(sizeProblems(counts, OVER_THE_LIMIT)).toEqual([]);
  });
});
