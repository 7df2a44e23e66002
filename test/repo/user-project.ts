import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAndPackAll, run } from './packages.js';
import { readerEnv } from './server-process.js';

/**
 * A reader's project: a folder OUTSIDE the workspace, with Tiffin installed by npm from the packed tarballs
 * (what `npm i @tiffin/cli` will give once published), so nothing resolves through the workspace.
 *
 * The packages are built and packed once per test file, and npm installs all of them (plus {@link EXTRA_DEPS})
 * once into a shared scratch install; each `userProject()` is then a fresh folder whose `node_modules` is a
 * link to that install, so a folder costs milliseconds.
 *
 * ```ts
 * afterAll(removeUserProjects);
 * const project = await userProject({ kind: 'cjs' }); // a folder as `npm init -y` leaves it
 * writeFileSync(join(project.dir, 'service.ts'), source);
 * new ServerProcess(project.bin('tiffin'), ['serve', 'service.ts'], { cwd: project.dir, env: project.env({ PORT }) });
 * ```
 *
 * A project that runs `npm install` itself (one `tiffin init` wrote, which points at the tarballs the CLI came
 * from) installs with {@link npmInstall}, the way a reader would.
 */

/** `bare`: no package.json at all; `cjs`: what `npm init -y` writes (`"type": "commonjs"`); `esm`: `"type": "module"`. */
export type ProjectKind = 'bare' | 'cjs' | 'esm';

export interface UserProject {
  readonly kind: ProjectKind;
  /** The project folder (a new one per call); `node_modules` in it links to the shared install. */
  readonly dir: string;
  /** Path of an installed binary, as `npx <name>` would find it (e.g. `bin('tiffin')`). */
  bin(name: string): string;
  /** A reader's environment for children run in it (no npm_/vitest variables), plus `extra`. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
}

/**
 * Installed next to the tarballs: packages the docs' examples import besides Tiffin's own, and what a project
 * from `tiffin init` has for its `typecheck` script.
 */
export const EXTRA_DEPS: readonly string[] = [
  'zod@4.6.7',
  'typescript@5.9.3',
  '@types/node@^20.19.0',
  // TF.js is an optional peer of @tiffin/diffusion and @tiffin/cli; the docs' TF.js examples install it.
  '@tensorflow/tfjs@4.22.0',
  '@tensorflow/tfjs-backend-wasm@4.22.0',
  // docs/server.md's own routes.
  '@koa/router@15.7.0',
  'koa-body@8.0.1',
];

/**
 * npm `overrides` a project with @tiffin/io-pandas needs (danfojs-node pulls xlsx from a CDN, and
 * @tensorflow/tfjs-node, which downloads libtensorflow; see packages/io-pandas/README.md). The tfjs-node one is
 * global: @tiffin/tfjs lists the real tfjs-node as optional, and npm then dedupes danfojs-node's overridden edge
 * onto it.
 */
export const NPM_OVERRIDES = {
  xlsx: '0.18.5',
  '@tensorflow/tfjs-node': 'npm:@tensorflow/tfjs@4.22.0',
} as const;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Under the OS temp folder, with no package.json above it: `bare` folders really have none.
let scratch: string | undefined;
let tarballsOnce: Promise<Map<string, string>> | undefined;
let installOnce: Promise<string> | undefined;
let counter = 0;

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

function scratchDir(): string {
  scratch ??= mkdtempSync(join(tmpdir(), 'tiffin-user-'));
  return scratch;
}

/** The published packages built and packed once per test file: package name → tarball path. */
export function tiffinTarballs(): Promise<ReadonlyMap<string, string>> {
  tarballsOnce ??= (async () => {
    const dest = join(scratchDir(), 'tarballs');
    mkdirSync(dest, { recursive: true });
    const started = Date.now();
    const tarballs = await buildAndPackAll(ROOT, dest);
    console.log(`user-project: built and packed ${tarballs.size} packages in ${seconds(started)}`);
    return tarballs;
  })();
  return tarballsOnce;
}

/**
 * `npm install` in `dir` as a reader offline or without a GPU runs it (README, "Offline installs"): from npm's
 * cache when it can, with onnxruntime-node's CUDA download skipped. `scripts: false` adds --ignore-scripts.
 */
export async function npmInstall(
  dir: string,
  args: readonly string[] = [],
  options: { scripts?: boolean } = {},
): Promise<void> {
  const flags = [
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    ...(options.scripts === false ? ['--ignore-scripts'] : []),
  ];
  await run('npm', ['install', ...flags, ...args], {
    cwd: dir,
    env: readerEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip' }),
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The shared install every project links to: all tarballs and EXTRA_DEPS, installed once. */
function sharedInstall(): Promise<string> {
  installOnce ??= (async () => {
    const tarballs = await tiffinTarballs();
    const dir = join(scratchDir(), 'install');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'tiffin-user-install', private: true, overrides: NPM_OVERRIDES }),
    );
    // Without install scripts: none is needed to run (onnxruntime-node's CPU build is in its package), and
    // @tensorflow/tfjs-node's (an optional dependency of @tiffin/diffusion, a dependency of danfojs-node's
    // through the override) downloads libtensorflow, which fails offline and then fails the install.
    const started = Date.now();
    await npmInstall(dir, [...EXTRA_DEPS, ...tarballs.values()], { scripts: false });
    console.log(`user-project: npm installed them in ${seconds(started)}`);
    return join(dir, 'node_modules');
  })();
  return installOnce;
}

/** Links the shared install into an existing folder as its node_modules (e.g. a project `tiffin init` wrote). */
export async function linkInstall(dir: string): Promise<void> {
  symlinkSync(await sharedInstall(), join(dir, 'node_modules'), 'dir');
}

/** A new empty folder in the scratch area (nothing installed), e.g. for `tiffin init <folder>`. */
export function scratchFolder(name: string): string {
  const dir = join(scratchDir(), 'projects', `${name}-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A fresh project folder of the given kind with Tiffin installed (see the module comment). */
export async function userProject(options: { kind: ProjectKind }): Promise<UserProject> {
  await sharedInstall();
  const dir = scratchFolder(options.kind);
  await linkInstall(dir);
  if (options.kind !== 'bare') {
    // Exactly what a reader's `npm init -y` writes (npm ≥ 10.9 says "type": "commonjs").
    await run('npm', ['init', '-y'], { cwd: dir, env: readerEnv({}) });
    if (options.kind === 'esm')
      await run('npm', ['pkg', 'set', 'type=module'], { cwd: dir, env: readerEnv({}) });
  }
  return {
    kind: options.kind,
    dir,
    bin: (name) => join(dir, 'node_modules', '.bin', name),
    env: (extra = {}) => readerEnv(extra),
  };
}

/** Removes every folder this module made (call from `afterAll`). */
export async function removeUserProjects(): Promise<void> {
  if (scratch) await rm(scratch, { recursive: true, force: true });
  scratch = undefined;
  tarballsOnce = undefined;
  installOnce = undefined;
}
