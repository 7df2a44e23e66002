import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

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
export function pack(pnpm: string, pkg: WorkspacePackage, dest: string): string {
  const out = execFileSync(process.execPath, [pnpm, 'pack', '--pack-destination', dest], {
    cwd: pkg.dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const tarball = out
    .trim()
    .split('\n')
    .reverse()
    .find((line) => line.trim().endsWith('.tgz'));
  if (!tarball) throw new Error(`pnpm pack printed no tarball for ${pkg.name}:\n${out}`);
  return tarball.trim().startsWith('/') ? tarball.trim() : join(dest, tarball.trim());
}

/** Runs a checker CLI from the repository's dev dependencies; its exit status and output. */
export function runChecker(root: string, bin: string, args: string[]): { ok: boolean; output: string } {
  try {
    const output = execFileSync(join(root, 'node_modules', '.bin', bin), args, {
      encoding: 'utf8',
      timeout: 180_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    return { ok: true, output };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/**
 * The packages are ESM only (Node ≥ 20.19 can `require()` them), so attw checks the ESM resolution modes:
 * its `esm-only` profile. publint runs in strict mode (suggestions fail too).
 */
export function checkTarball(root: string, tarball: string): { publint: string; attw: string; ok: boolean } {
  const publint = runChecker(root, 'publint', ['--strict', tarball]);
  const attw = runChecker(root, 'attw', [tarball, '--profile', 'esm-only', '--format', 'ascii']);
  return { publint: publint.output, attw: attw.output, ok: publint.ok && attw.ok };
}
