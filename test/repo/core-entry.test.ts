import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, pnpmScript, publishedPackages, run } from './packages.js';
import { exportedNames } from './public-names.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CORE = join(ROOT, 'packages/core');
/** The most names core's public entry may export (values and types). */
const MAX_PUBLIC_NAMES = 80;
/** The most names `@tiffin/core/descriptor` (the rest of the descriptor contract) may export. */
const MAX_DESCRIPTOR_NAMES = 44;

// A user's project outside the workspace holding core as npm unpacks it (the published exports map).
const WORK = mkdtempSync(join(tmpdir(), 'tiffin-core-entry-'));
const PROJECT = join(WORK, 'app');
let manifest: { exports: Record<string, unknown>; dependencies: Record<string, string> };
const [publicNames, descriptorNames] = exportedNames(
  join(CORE, 'src/index.ts'),
  join(CORE, 'src/descriptor.ts'),
) as [string[], string[]];

beforeAll(async () => {
  const core = publishedPackages(ROOT).find((p) => p.name === '@tiffin/core');
  if (!core) throw new Error('packages/core is not a published package');
  const tarball = await pack(pnpmScript(ROOT), core, WORK);
  const installed = join(PROJECT, 'node_modules/@tiffin/core');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  writeFileSync(
    join(PROJECT, 'package.json'),
    JSON.stringify({ name: 'user', private: true, type: 'module' }),
  );
  manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
}, 120_000);

afterAll(async () => {
  await rm(WORK, { recursive: true, force: true });
});

/** How Node resolves `specifier` from the user's project: the URL, or the error code. */
async function resolveFromProject(specifier: string): Promise<string> {
  const script = `try { console.log(import.meta.resolve(${JSON.stringify(specifier)})); } catch (e) { console.log(e.code); }`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: PROJECT });
  return stdout.trim();
}

describe("@tiffin/core's public entry", () => {
  it(`exports at most ${MAX_PUBLIC_NAMES} names, the ones a service needs and no packaging`, () => {
    const names = publicNames;
    expect(names.length).toBeLessThanOrEqual(MAX_PUBLIC_NAMES);
    expect(names).toEqual(
      expect.arrayContaining(['Service', 'serve', 'NDArray', 'IODescriptor', 'ModelStore']),
    );
    for (const internal of ['Runtime', 'parseJson', 'PackageStore', 'buildPackage', 'EntryStore']) {
      expect(names).not.toContain(internal);
    }
  });

  it(`leaves the rest of the descriptor contract to @tiffin/core/descriptor, at most ${MAX_DESCRIPTOR_NAMES} names`, async () => {
    expect(descriptorNames.length).toBeLessThanOrEqual(MAX_DESCRIPTOR_NAMES);
    expect(descriptorNames).toEqual(
      expect.arrayContaining(['DescriptorSpec', 'RequestBodyObject', 'ResponseObject', 'FileMessage']),
    );
    // A complement of the public entry, not a second copy of it.
    expect(descriptorNames.filter((name) => publicNames.includes(name))).toEqual([]);
    expect(await resolveFromProject('@tiffin/core/descriptor')).toMatch(
      /\/node_modules\/@tiffin\/core\/dist\/descriptor\.js$/,
    );
  });

  it('a user project cannot reach the internals by a deep import', async () => {
    expect(await resolveFromProject('@tiffin/core')).toMatch(
      /\/node_modules\/@tiffin\/core\/dist\/index\.js$/,
    );
    for (const deep of [
      '@tiffin/core/dist/index.js',
      '@tiffin/core/dist/internal.js',
      '@tiffin/core/src/index.ts',
      '@tiffin/core/src/store/model-store.ts',
      '@tiffin/core/proto/inference/grpc_predict_v2.proto',
    ]) {
      expect([deep, await resolveFromProject(deep)]).toEqual([deep, 'ERR_PACKAGE_PATH_NOT_EXPORTED']);
    }
    // The other entries: the rest of the descriptor contract, and the internals the workspace packages (onnx,
    // tfjs, diffusion, fuzz, build, cli) share, with no stability promise. A new subpath is added here on purpose.
    expect(Object.keys(manifest.exports).sort()).toEqual([
      '.',
      './descriptor',
      './internal',
      './package.json',
    ]);
  });

  it('installs no packaging tools: bundler, archiver and @tiffin/build stay out of its dependencies', () => {
    const dependencies = Object.keys(manifest.dependencies);
    expect(dependencies.length).toBeGreaterThan(0);
    for (const tool of ['esbuild', 'tar', '@tiffin/build', '@tiffin/cli'])
      expect(dependencies).not.toContain(tool);
  });
});
