import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAndPackAll, run } from './packages.js';
import { readerEnv } from './server-process.js';

/**
 * A reader's project: a folder OUTSIDE the workspace with Tiffin installed by npm from the packed tarballs,
 * so nothing resolves through the workspace. Packed and installed once per test file; each `userProject()`
 * is a fresh folder whose `node_modules` links to that install.
 *
 * Minimal form of the helper the "any folder" work (branch wt/i27) brings, with the same exported names, so
 * that one replaces this file unchanged for its callers.
 */

export type ProjectKind = 'bare' | 'cjs' | 'esm';

export interface UserProject {
  readonly kind: ProjectKind;
  readonly dir: string;
  bin(name: string): string;
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
}

/** Installed next to the tarballs: what the docs' snippets import besides Tiffin (zod) and their types. */
export const EXTRA_DEPS: readonly string[] = ['zod@4.6.7', '@types/node@20.19.43'];

/** npm `overrides` for @tiffin/io-pandas's danfojs-node (packages/io-pandas/README.md). */
export const NPM_OVERRIDES = {
  xlsx: '0.18.5',
  'danfojs-node': { '@tensorflow/tfjs-node': 'npm:@tensorflow/tfjs@4.22.0' },
} as const;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let scratch: string | undefined;
let tarballsOnce: Promise<Map<string, string>> | undefined;
let installOnce: Promise<string> | undefined;
let counter = 0;

function scratchDir(): string {
  scratch ??= mkdtempSync(join(tmpdir(), 'tiffin-user-'));
  return scratch;
}

/** The published packages built and packed once: package name → tarball path. */
export function tiffinTarballs(): Promise<ReadonlyMap<string, string>> {
  tarballsOnce ??= (async () => {
    const dest = join(scratchDir(), 'tarballs');
    mkdirSync(dest, { recursive: true });
    return buildAndPackAll(ROOT, dest);
  })();
  return tarballsOnce;
}

function sharedInstall(): Promise<string> {
  installOnce ??= (async () => {
    const tarballs = await tiffinTarballs();
    const dir = join(scratchDir(), 'install');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'tiffin-user-install', private: true, overrides: NPM_OVERRIDES }),
    );
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        ...EXTRA_DEPS,
        ...tarballs.values(),
      ],
      {
        cwd: dir,
        env: readerEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip' }),
        timeout: 600_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return join(dir, 'node_modules');
  })();
  return installOnce;
}

/** A fresh project folder of the given kind with Tiffin installed. */
export async function userProject(options: { kind: ProjectKind }): Promise<UserProject> {
  const modules = await sharedInstall();
  const dir = join(scratchDir(), 'projects', `${options.kind}-${++counter}`);
  mkdirSync(dir, { recursive: true });
  symlinkSync(modules, join(dir, 'node_modules'), 'dir');
  if (options.kind !== 'bare') {
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
