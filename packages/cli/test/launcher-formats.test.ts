import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR, collectOutput } from './cli-process.js';

/**
 * `bin/tiffin.js` from this checkout (what `npx tiffin` and `pnpm cli` run: the CLI's sources, tsx's ES-module
 * hooks only) serving services from folders outside the workspace whose @tiffin/core links to the workspace
 * package: a .ts service in a folder with no package.json or an `npm init -y` one used to fail with "Cannot
 * require() ES Module … in a cycle". test/repo/user-projects.test.ts does every combination from npm tarballs.
 */

const ESM_TS = `import { NDArray, NumpyNdarray, Service } from '@tiffin/core';

const svc = new Service('sums');
svc.api(
  { input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 2], enforce_shape: true }), output: new NumpyNdarray() },
  function sum(input: NDArray): NDArray {
    const data = input.data as Float64Array;
    const out: number[] = [];
    for (let i = 0; i < data.length; i += 2) out.push(data[i]! + data[i + 1]!);
    return NDArray.from(out, 'float64');
  },
);
export default svc;
`;

// CommonJS TypeScript: its require('@tiffin/core') resolves to the package's build.
const CJS_TS = `const { NDArray, NumpyNdarray, Service } = require('@tiffin/core');

const svc = new Service('sums');
svc.api(
  { input: new NumpyNdarray({ dtype: 'float64', shape: [-1, 2], enforce_shape: true }), output: new NumpyNdarray() },
  function sum(input: InstanceType<typeof NDArray>) {
    const data = input.data as Float64Array;
    const out: number[] = [];
    for (let i = 0; i < data.length; i += 2) out.push(data[i]! + data[i + 1]!);
    return NDArray.from(out, 'float64');
  },
);
module.exports = svc;
`;

let root: string;
const folders: Record<'bare' | 'cjs', string> = { bare: '', cjs: '' };

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tiffin-launcher-'));
  for (const kind of ['bare', 'cjs'] as const) {
    const dir = join(root, kind);
    await mkdir(join(dir, 'node_modules', '@tiffin'), { recursive: true });
    await symlink(join(CLI_DIR, '..', 'core'), join(dir, 'node_modules', '@tiffin', 'core'), 'dir');
    // What `npm init -y` writes (npm 10.9+): an explicit CommonJS package.
    if (kind === 'cjs') await writeFile(join(dir, 'package.json'), '{"name": "app", "type": "commonjs"}\n');
    folders[kind] = dir;
  }
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

async function servesSums(dir: string, file: string, source: string): Promise<void> {
  await writeFile(join(dir, file), source);
  const proc = collectOutput(
    spawn(process.execPath, [join(CLI_DIR, 'bin', 'tiffin.js'), 'serve', file, '--port', '0'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  try {
    const url = await proc.url;
    const post = (body: string) =>
      fetch(`${url}/sum`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const good = await post('[[1, 2], [3, 4]]');
    expect(good.status).toBe(200);
    expect(await good.json()).toEqual([3, 7]);
    const bad = await post('[[1, 2, 3]]');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'BAD_INPUT' });
  } finally {
    proc.child.kill('SIGTERM');
    await proc.done;
  }
}

describe('bin/tiffin.js from the checkout serves a service outside the workspace', () => {
  it('.ts with import/export in a folder with no package.json', async () => {
    await servesSums(folders.bare, 'service.ts', ESM_TS);
  }, 60_000);

  it('.ts with import/export in an `npm init -y` (CommonJS) folder', async () => {
    await servesSums(folders.cjs, 'service.ts', ESM_TS);
  }, 60_000);

  it('.cts (CommonJS TypeScript) in an `npm init -y` folder', async () => {
    await servesSums(folders.cjs, 'service.cts', CJS_TS);
  }, 60_000);
});
