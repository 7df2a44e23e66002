import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** The part of core's error module this test reads (imported by path: `test/` compiles apart from packages). */
interface ErrorsModule {
  ERROR_CODES: Record<string, { status: number }>;
  GrpcStatus: Record<string, number>;
  grpcStatusOfCode(code: string): number;
}
const ERRORS_MODULE: string = join(ROOT, 'packages/core/src/errors/index.ts');
const { ERROR_CODES, GrpcStatus, grpcStatusOfCode } = (await import(ERRORS_MODULE)) as ErrorsModule;

/** Codes that mimic Node's own (`ERR_INVALID_HTTP_TOKEN` on a TypeError), not error bodies of the catalog. */
const NODE_STYLE = /^ERR_/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts)$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Every code string a package's sources give an error: a class's `static code`, or a `code:` option. */
function codesInSources(): Map<string, string> {
  const found = new Map<string, string>();
  const packages = join(ROOT, 'packages');
  for (const pkg of readdirSync(packages)) {
    for (const file of sourceFiles(join(packages, pkg, 'src'))) {
      if (file.endsWith(join('errors', 'codes.ts'))) continue;
      const text = readFileSync(file, 'utf8');
      // `code: 'X'`, `code: rank ? 'X' : 'Y'`, `readonly code: string = 'X'`: the literals up to the next , ; or }.
      for (const match of text.matchAll(/\bcode(?::\s*string\s*=|:)([^,;}\n]*)/g)) {
        for (const literal of (match[1] ?? '').matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)'/g)) {
          const code = literal[1] as string;
          if (!NODE_STYLE.test(code)) found.set(code, relative(ROOT, file));
        }
      }
    }
  }
  return found;
}

/** The rows of docs/errors.md's tables: code → [HTTP status, gRPC status name]. */
function documentedCodes(): Map<string, [number, string]> {
  const text = readFileSync(join(ROOT, 'docs/errors.md'), 'utf8');
  const rows = new Map<string, [number, string]>();
  for (const row of text.matchAll(/^\| `([A-Z0-9_]+)` \| (\d{3}) \| `([A-Z_]+)` \|/gm)) {
    rows.set(row[1] as string, [Number(row[2]), row[3] as string]);
  }
  return rows;
}

const grpcName = (code: number) => Object.entries(GrpcStatus).find(([, v]) => v === code)?.[0];

describe('the one table of error codes (packages/core/src/errors/codes.ts)', () => {
  it('holds every code the sources give an error, and none they do not', () => {
    const inSources = codesInSources();
    const missing = [...inSources].filter(([code]) => !(code in ERROR_CODES)).map(([c, f]) => `${c} (${f})`);
    expect(missing, 'codes raised but not in ERROR_CODES').toEqual([]);
    const unused = Object.keys(ERROR_CODES).filter((code) => !inSources.has(code));
    expect(unused, 'ERROR_CODES entries nothing raises').toEqual([]);
  });

  it('is listed by docs/errors.md, code for code, with the same HTTP and gRPC statuses', () => {
    const documented = documentedCodes();
    expect([...documented.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect(documented.get(code), code).toEqual([entry.status, grpcName(grpcStatusOfCode(code))]);
    }
  });
});
