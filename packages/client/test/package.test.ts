import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as client from '../src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('@tiffin/client package', () => {
  it('bundles for browsers from its own sources alone (no server code, no Node modules)', async () => {
    const result = await build({
      entryPoints: [join(ROOT, 'src/index.ts')],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).map((p) => relative(ROOT, join(process.cwd(), p)));
    expect(inputs.every((p) => p.startsWith('src/'))).toBe(true);
    expect(result.outputFiles[0]!.text).not.toMatch(/from ["']node:|require\(/);
  });

  it('exports the public contract only', () => {
    expect(Object.keys(client).sort()).toEqual(['TiffinClientError', 'createClient', 'isTiffinClientError']);
  });

  it('package.json: ESM exports with types, dist and README published, core only as an optional peer', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({
      source: './src/index.ts',
      types: './dist/index.d.ts',
      import: './dist/index.js',
      // CommonJS services require() the ES module build (Node 20.19+ loads it).
      default: './dist/index.js',
    });
    expect(pkg.files).toEqual(['dist', 'README.md']);
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependenciesMeta['@tiffin/core'].optional).toBe(true);
  });
});
