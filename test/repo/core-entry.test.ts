import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, pnpmScript, publishedPackages, run } from './packages.js';
import { exportedNames } from './public-names.js';
import { readerEnv } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CORE = join(ROOT, 'packages/core');
/** The most names core's public entry may export (values and types). */
const MAX_PUBLIC_NAMES = 80;
/** The most names `@tiffin/core/descriptor` (the rest of the descriptor contract) may export. */
const MAX_DESCRIPTOR_NAMES = 44;
/**
 * The most names `@tiffin/core/tasks` (the task store contract) may export: the interface and the 10 plain-data
 * types it takes and answers, 9 errors (with `unknownTask`), 10 helpers (client shares, the ETA formula and the
 * queued event, pushed events, final states, the id form, a queued task's view) and the 2 built-in stores with
 * their options: 34; a new name must be weighed here. (Telling a queued task its new place and bounding a step's
 * detail are core's, not a store's: `tasks/runner/`.)
 */
const MAX_TASKS_NAMES = 34;
/**
 * The most names `@tiffin/core/testing` may export: `describeTaskStore`, `describeTaskRoutes`,
 * `describeTaskWebhooks`, the two option types they share and the ids the routes refuse (`NOT_TASK_IDS`): 6.
 */
const MAX_TESTING_NAMES = 6;

// A user's project outside the workspace holding core as npm unpacks it (the published exports map).
const WORK = mkdtempSync(join(tmpdir(), 'tiffin-core-entry-'));
const PROJECT = join(WORK, 'app');
let manifest: {
  exports: Record<string, unknown>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const [publicNames, descriptorNames, tasksNames, testingNames] = exportedNames(
  join(CORE, 'src/index.ts'),
  join(CORE, 'src/descriptor.ts'),
  join(CORE, 'src/tasks.ts'),
  join(CORE, 'src/testing.ts'),
) as [string[], string[], string[], string[]];

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

  it(`publishes the task store contract as @tiffin/core/tasks, at most ${MAX_TASKS_NAMES} names`, async () => {
    expect(tasksNames.length).toBeLessThanOrEqual(MAX_TASKS_NAMES);
    expect(tasksNames).toEqual(
      expect.arrayContaining([
        'TaskStore',
        'TaskView',
        'TaskRequest',
        'TaskResult',
        'ClaimedTask',
        'TaskNotFound',
        'TasksFull',
        'MemoryTaskStore',
        'pushedEvents',
      ]),
    );
    // A complement of the public entry, but for `TaskStore`, kept there so that no user's import breaks.
    expect(tasksNames.filter((name) => publicNames.includes(name))).toEqual(['TaskStore']);
    expect(await resolveFromProject('@tiffin/core/tasks')).toMatch(
      /\/node_modules\/@tiffin\/core\/dist\/tasks\.js$/,
    );
  });

  it(`publishes the store contract suite as @tiffin/core/testing, at most ${MAX_TESTING_NAMES} names, vitest an optional peer`, async () => {
    expect(testingNames.length).toBeLessThanOrEqual(MAX_TESTING_NAMES);
    expect(testingNames).toEqual(expect.arrayContaining(['describeTaskStore', 'describeTaskRoutes']));
    expect(await resolveFromProject('@tiffin/core/testing')).toMatch(
      /\/node_modules\/@tiffin\/core\/dist\/testing\.js$/,
    );
    // A service's install never pulls vitest in; a store's tests bring their own.
    expect(Object.keys(manifest.dependencies)).not.toContain('vitest');
    expect(manifest.peerDependencies.vitest).toBeDefined();
    expect(manifest.peerDependenciesMeta.vitest).toEqual({ optional: true });
  });

  it("runs a store's own vitest suite on the installed @tiffin/core/tasks and /testing", async () => {
    // The project's dependencies as npm would install them: core's own (from the workspace's install), and the
    // vitest the store's package brings as its dev dependency.
    const modules = join(PROJECT, 'node_modules');
    const link = (name: string, from: string) => {
      mkdirSync(join(modules, name, '..'), { recursive: true });
      symlinkSync(realpathSync(join(from, 'node_modules', name)), join(modules, name));
    };
    for (const name of Object.keys(manifest.dependencies)) link(name, CORE);
    link('vitest', ROOT);
    writeFileSync(
      join(PROJECT, 'my-store.test.js'),
      [
        "import { MemoryTaskStore } from '@tiffin/core/tasks';",
        "import { describeTaskRoutes, describeTaskStore } from '@tiffin/core/testing';",
        'class MyStore extends MemoryTaskStore {}',
        "describeTaskStore('MyStore', (limits) => new MyStore(limits));",
        "describeTaskRoutes('MyStore', async (limits) => new MyStore(limits));",
      ].join('\n'),
    );
    const vitest = join(modules, 'vitest/vitest.mjs');
    const { stdout } = await run(process.execPath, [vitest, 'run', '--reporter=json'], {
      cwd: PROJECT,
      env: readerEnv({}),
    });
    const report = JSON.parse(stdout) as { numFailedTests: number; numPassedTests: number };
    expect(report.numFailedTests).toBe(0);
    expect(report.numPassedTests).toBeGreaterThan(10);
  }, 120_000);

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
    // The other entries: the rest of the descriptor contract, the internals the workspace packages (onnx,
    // tfjs, diffusion, fuzz, build, cli) share, with no stability promise, the task store contract and its
    // suite. A new subpath is added here on purpose.
    expect(Object.keys(manifest.exports).sort()).toEqual([
      '.',
      './descriptor',
      './internal',
      './package.json',
      './tasks',
      './testing',
    ]);
  });

  it('installs no packaging tools: bundler, archiver and @tiffin/build stay out of its dependencies', () => {
    const dependencies = Object.keys(manifest.dependencies);
    expect(dependencies.length).toBeGreaterThan(0);
    for (const tool of ['esbuild', 'tar', '@tiffin/build', '@tiffin/cli'])
      expect(dependencies).not.toContain(tool);
  });
});
