import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR, CliProcess } from './cli-process.js';

const CORE_DIR = join(CLI_DIR, '..', 'core');

/**
 * A service file in a temp folder outside the workspace, with no package.json (so tsx loads it as CommonJS),
 * importing its own copy of the built @tiffin/core: two module instances of core in one process, the case
 * where `instanceof` failed and every client error became a 500.
 */
const SERVICE = `import { JSON as JSONDescriptor, NumpyNdarray, Service } from '@tiffin/core';

const svc = new Service('outside_workspace');
svc.api({ input: new JSONDescriptor(), output: new JSONDescriptor() }, function echo(v: unknown) {
  return v;
});
svc.api({ input: new NumpyNdarray({ shape: [2], enforce_shape: true }), output: new NumpyNdarray() }, function nd(v: unknown) {
  return v;
});
export default svc;
`;

let folder: string;
let server: CliProcess | undefined;
beforeAll(async () => {
  if (!existsSync(join(CORE_DIR, 'dist', 'index.js'))) {
    throw new Error('packages/core/dist is missing: build it first (`pnpm test` builds every package)');
  }
  folder = await mkdtemp(join(tmpdir(), 'tiffin-outside-'));
  const copy = join(folder, 'node_modules', '@tiffin', 'core');
  await mkdir(copy, { recursive: true });
  await cp(join(CORE_DIR, 'dist'), join(copy, 'dist'), { recursive: true });
  await cp(join(CORE_DIR, 'proto'), join(copy, 'proto'), { recursive: true });
  // The manifest as published (publishConfig's exports, no `source` condition); dependencies are linked.
  const manifest = JSON.parse(await readFile(join(CORE_DIR, 'package.json'), 'utf8')) as {
    exports: Record<string, Record<string, string>>;
    publishConfig?: { exports?: Record<string, Record<string, string>> };
  };
  manifest.exports = manifest.publishConfig?.exports ?? manifest.exports;
  delete manifest.exports['.']!.source;
  await writeFile(join(copy, 'package.json'), JSON.stringify(manifest));
  await symlink(join(CORE_DIR, 'node_modules'), join(copy, 'node_modules'), 'dir');
  await writeFile(join(folder, 'service.ts'), SERVICE);
}, 60_000);
afterAll(async () => {
  server?.kill('SIGKILL');
  if (server) await server.exited;
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('a service outside the workspace with its own copy of @tiffin/core', () => {
  it('answers client errors with 400 and their code, not 500', async () => {
    server = new CliProcess(['serve', join(folder, 'service.ts'), '--port', '0']);
    const url = await server.readyUrl();
    const post = (path: string, body: string) =>
      fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const malformed = await post('/echo', '{bad');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ type: 'BadInput', code: 'BAD_INPUT' });
    const deep = await post('/echo', `${'['.repeat(5000)}${']'.repeat(5000)}`);
    expect(deep.status).toBe(400);
    const shape = await post('/nd', '[1, 2, 3]');
    expect(shape.status).toBe(400);
    expect(((await shape.json()) as { code: string }).code).toBe('BAD_INPUT');
    expect(await (await post('/echo', '[1]')).json()).toEqual([1]);
  });
});
