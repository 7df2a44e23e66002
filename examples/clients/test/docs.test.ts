import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type GrpcServerHandle, type ServerHandle, serve, serveGrpc, silentLogger } from '@tiffin/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import svc from '../service.js';

const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const DOC = join(HERE, '..', '..', '..', 'docs', 'clients.md');
const FIXTURES = join(HERE, '..', 'fixtures');

/** The fenced blocks of a language in the page, in order. */
function blocks(markdown: string, lang: string): string[] {
  const out: string[] = [];
  const fence = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const m of markdown.matchAll(fence)) out.push(m[1]!);
  return out;
}

async function has(command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args);
    return true;
  } catch {
    return false;
  }
}

const doc = await readFile(DOC, 'utf8');
const shell = blocks(doc, 'sh');
const curl = shell.filter((b) => b.trimStart().startsWith('curl'));
const grpcurl = shell.filter((b) => b.trimStart().startsWith('grpcurl'));
const python = blocks(doc, 'python');
const haveCurl = await has('curl', ['--version']);
const havePython = await has('python3', ['-c', 'import requests']);
const haveGrpcurl = await has('grpcurl', ['-version']);
// Visible in the test output when a tool is missing (the examples are then not run).
if (!haveCurl) console.warn('docs/clients.md: curl not found: the curl examples were not run');
if (!havePython)
  console.warn('docs/clients.md: python3 with requests not found: the Python examples were not run');
if (!haveGrpcurl) console.warn('docs/clients.md: grpcurl not found: the grpcurl example was not run');

let http: ServerHandle;
let grpc: GrpcServerHandle;
let work: string;
beforeAll(async () => {
  http = await serve(svc, { port: 0, host: '127.0.0.1', handleSignals: false, logger: silentLogger });
  grpc = await serveGrpc(svc, { port: 0, host: '127.0.0.1' });
  work = await mkdtemp(join(tmpdir(), 'tiffin-docs-'));
  await cp(FIXTURES, work, { recursive: true });
});
afterAll(async () => {
  await http?.close();
  await grpc?.close();
  await rm(work, { recursive: true, force: true });
});

/** The page's addresses → this test's servers. */
const localize = (code: string) =>
  code.replaceAll('http://127.0.0.1:3000', http.url).replaceAll('127.0.0.1:3001', `127.0.0.1:${grpc.port}`);

describe('docs/clients.md examples run against the example service', () => {
  it('has curl and Python examples for every descriptor, and a grpcurl example', () => {
    for (const api of [
      'scale',
      'keys',
      'shout',
      'checksum',
      'grayscale',
      'totals',
      'totals_csv',
      'series_sum',
      'describe',
      'words',
    ]) {
      expect(
        curl.some((b) => b.includes(`/${api} `) || b.includes(`/${api}\n`) || b.includes(`/${api} \\`)),
        `curl ${api}`,
      ).toBe(true);
      expect(
        python.some((b) => b.includes(`/${api}"`)),
        `python ${api}`,
      ).toBe(true);
    }
    expect(curl.some((b) => b.includes('application/vnd.apache.parquet'))).toBe(true);
    expect(curl.some((b) => b.includes('text/csv'))).toBe(true);
    expect(grpcurl).toHaveLength(1);
  });

  it.runIf(haveCurl).each(curl.map((b, i) => [i, b]))('curl example %i', async (_i, code) => {
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', localize(code as string)], { cwd: work });
    // A block that saves the answer to a file (-o) prints nothing; the others print the answer.
    if (!(code as string).includes(' -o ')) expect(stdout.trim()).not.toBe('');
  });

  it.runIf(havePython).each(python.map((b, i) => [i, b]))('python example %i', async (_i, code) => {
    const { stdout } = await run('python3', ['-c', localize(code as string)], { cwd: work });
    expect(stdout.trim()).not.toBe('');
  });

  it.runIf(haveGrpcurl)('grpcurl example', async () => {
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', localize(grpcurl[0]!)], { cwd: work });
    expect(stdout).toContain('NAMASTE');
  });
});
