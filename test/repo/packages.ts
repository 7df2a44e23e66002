import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';

/** Async, so a long child never blocks the test worker's event loop (vitest talks to it over RPC). */
export const run = promisify(execFile);

/** Packing the workspace's packages the way they are published, and checking them with publint and attw. */

export interface WorkspacePackage {
  name: string;
  dir: string;
}

export function publishedPackages(root: string): WorkspacePackage[] {
  return readdirSync(join(root, 'packages'))
    .map((name) => join(root, 'packages', name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({
      dir,
      ...(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; private?: boolean }),
    }))
    .filter((pkg) => !pkg.private)
    .map(({ name, dir }) => ({ name, dir }));
}

/** The pinned pnpm's script, fetched by npm into its cache as the README's `npx -y pnpm@…` does. */
export function pnpmScript(root: string): string {
  const bin = execFileSync('npm', ['exec', '--yes', '--package=pnpm@10.34.9', '-c', 'command -v pnpm'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return realpathSync(bin.trim());
}

/** Environment for pnpm/turbo children: the pinned pnpm on PATH (turbo looks for it there). */
export function withPnpmOnPath(pnpm: string): NodeJS.ProcessEnv {
  const shimDir = dirname(dirname(pnpm)); // …/node_modules/pnpm
  const bin = join(dirname(shimDir), '.bin');
  return { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
}

/** `pnpm pack` (workspace:* becomes the real version, publishConfig applied) into `dest`; the tarball path. */
export async function pack(pnpm: string, pkg: WorkspacePackage, dest: string): Promise<string> {
  const { stdout } = await run(process.execPath, [pnpm, 'pack', '--pack-destination', dest], {
    cwd: pkg.dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const tarball = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((line) => line.trim().endsWith('.tgz'))
    ?.trim();
  if (!tarball) throw new Error(`pnpm pack printed no tarball for ${pkg.name}:\n${stdout}`);
  return tarball.startsWith('/') ? tarball : join(dest, tarball);
}

/**
 * Builds the publishable packages (turbo answers from its cache after `pnpm test`'s build) and packs each into
 * `dest`, as npm users get them; package name → tarball path.
 */
export async function buildAndPackAll(root: string, dest: string): Promise<Map<string, string>> {
  const pnpm = pnpmScript(root);
  await run(process.execPath, [pnpm, 'exec', 'turbo', 'run', 'build', '--filter=./packages/*'], {
    cwd: root,
    env: withPnpmOnPath(pnpm),
    timeout: 900_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const tarballs = new Map<string, string>();
  for (const pkg of publishedPackages(root)) tarballs.set(pkg.name, await pack(pnpm, pkg, dest));
  return tarballs;
}

/** Runs a checker CLI from the repository's dev dependencies; its exit status and output. */
async function runChecker(
  root: string,
  bin: string,
  args: string[],
): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(join(root, 'node_modules', '.bin', bin), args, {
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/**
 * The packages are ESM only (Node ≥ 20.19 can `require()` them), so attw checks the ESM resolution modes:
 * its `esm-only` profile. publint runs in strict mode (suggestions fail too).
 */
export async function checkTarball(root: string, tarball: string): Promise<{ output: string; ok: boolean }> {
  const [publint, attw] = await Promise.all([
    runChecker(root, 'publint', ['--strict', tarball]),
    runChecker(root, 'attw', [tarball, '--profile', 'esm-only', '--format', 'ascii']),
  ]);
  return { output: `${publint.output}\n${attw.output}`, ok: publint.ok && attw.ok };
}
