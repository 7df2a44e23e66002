import { spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MissingDependencyException, TiffinError } from '@tiffin/core/internal';

/** Our own packages, which are not published: they are vendored into the deployable package. */
export const VENDORED_SCOPE = '@tiffin/';
export const VENDOR_DIR = 'vendor';

interface PackageJson {
  name: string;
  version: string;
  files?: string[];
  exports?: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
  [key: string]: unknown;
}

async function readPackageJson(dir: string): Promise<PackageJson> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null)) !== null;
}

/**
 * Find the installed folder of package `name` as Node would from `fromDir` (walking up through
 * node_modules), falling back to where @tiffin/core itself is installed (so `@tiffin/core` resolves
 * even for a service file outside any project). Returns the real path.
 */
export async function findInstalledPackage(name: string, fromDir: string): Promise<string | null> {
  // This file runs from <build>/src or <build>/dist, which depends on @tiffin/core: an ancestor's node_modules has it.
  for (const start of [fromDir, dirname(fileURLToPath(import.meta.url))]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const candidate = join(dir, 'node_modules', name);
      if (await exists(join(candidate, 'package.json'))) return realpath(candidate);
      if (await exists(join(dir, 'package.json'))) {
        const own = await readPackageJson(dir).catch(() => null);
        if (own?.name === name) return realpath(dir);
      }
      if (dirname(dir) === dir) break;
    }
  }
  return null;
}

/** Exact versions of the external packages the bundle imports; @tiffin/* ones are vendored as `file:` dependencies. */
export async function resolveDependencies(
  packages: readonly string[],
  serviceDir: string,
  packageDir: string,
): Promise<Record<string, string>> {
  const dependencies: Record<string, string> = {};
  const vendored = new Map<string, string>();
  for (const name of packages) {
    const installed = await findInstalledPackage(name, serviceDir);
    if (!installed) {
      throw MissingDependencyException.forPackage(
        name,
        `bundling the service (it is imported from ${serviceDir})`,
      );
    }
    if (name.startsWith(VENDORED_SCOPE)) {
      dependencies[name] = `file:./${VENDOR_DIR}/${await vendorPackage(installed, packageDir, vendored)}`;
    } else {
      dependencies[name] = (await readPackageJson(installed)).version;
    }
  }
  return sortKeys(dependencies);
}

function vendorFolderName(name: string): string {
  return name.replace(/^@/, '').replace('/', '-');
}

/**
 * Copy a built @tiffin package (its published `files`, never `src`) into `<packageDir>/vendor/`,
 * building it first when its dist is missing or older than its sources. Its own @tiffin dependencies
 * are vendored too and linked with `file:` paths. Returns the vendor folder name.
 */
async function vendorPackage(
  sourceDir: string,
  packageDir: string,
  done: Map<string, string>,
): Promise<string> {
  const pkg = await readPackageJson(sourceDir);
  const folder = vendorFolderName(pkg.name);
  if (done.has(pkg.name)) return folder;
  done.set(pkg.name, folder);
  const rewrite = async (
    deps: Record<string, string> | undefined,
  ): Promise<Record<string, string> | undefined> => {
    if (!deps) return undefined;
    const out: Record<string, string> = {};
    for (const [name, range] of Object.entries(deps)) {
      if (name.startsWith(VENDORED_SCOPE) || range.startsWith('workspace:')) {
        const installed = await findInstalledPackage(name, sourceDir);
        if (!installed) throw MissingDependencyException.forPackage(name, `vendoring ${pkg.name}`);
        out[name] = `file:../${await vendorPackage(installed, packageDir, done)}`;
      } else {
        out[name] = range;
      }
    }
    return out;
  };
  // Dependencies first: vendoring them builds them, and this package's type declarations need theirs.
  const dependencies = await rewrite(pkg.dependencies);
  const optionalDependencies = await rewrite(pkg.optionalDependencies);
  const peerDependencies = await publishedPeerRanges(pkg.peerDependencies, sourceDir);
  await ensureBuilt(sourceDir, pkg);
  const target = join(packageDir, VENDOR_DIR, folder);
  await mkdir(target, { recursive: true });
  for (const entry of pkg.files ?? ['dist']) {
    if (entry === 'src' || entry.startsWith('src/')) continue;
    const from = join(sourceDir, entry);
    if (await exists(from)) await cp(from, join(target, entry), { recursive: true, dereference: true });
  }
  const published: PackageJson = {
    name: pkg.name,
    version: pkg.version,
    type: pkg.type,
    main: pkg.main,
    types: pkg.types,
    exports: stripSourceCondition(pkg.exports),
    dependencies,
    peerDependencies,
    // Without it npm takes every peer as required and fetches the optional ones (TF.js, @tiffin/tfjs) too.
    peerDependenciesMeta: peerMeta(pkg.peerDependenciesMeta, peerDependencies),
    optionalDependencies,
    license: pkg.license,
  };
  await writeFile(join(target, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
  return folder;
}

/**
 * Peer ranges as `pnpm pack` publishes them: `workspace:^` becomes `^<version>` of the package found from `fromDir`
 * (`workspace:*` the exact version, `workspace:<range>` the range), since npm cannot read the `workspace:` protocol.
 * A workspace peer that is not installed is left out (the peers a vendored package has are optional ones).
 */
async function publishedPeerRanges(
  peers: Record<string, string> | undefined,
  fromDir: string,
): Promise<Record<string, string> | undefined> {
  if (!peers) return undefined;
  const out: Record<string, string> = {};
  for (const [name, range] of Object.entries(peers)) {
    if (!range.startsWith('workspace:')) {
      out[name] = range;
      continue;
    }
    const spec = range.slice('workspace:'.length);
    if (spec !== '*' && spec !== '^' && spec !== '~') {
      out[name] = spec;
      continue;
    }
    const installed = await findInstalledPackage(name, fromDir);
    if (!installed) continue;
    const { version } = await readPackageJson(installed);
    out[name] = spec === '*' ? version : `${spec}${version}`;
  }
  return out;
}

/** The `peerDependenciesMeta` entries of the peers that are kept. */
function peerMeta(
  meta: PackageJson['peerDependenciesMeta'],
  peers: Record<string, string> | undefined,
): PackageJson['peerDependenciesMeta'] {
  if (!meta || !peers) return undefined;
  const kept = Object.entries(meta).filter(([name]) => Object.hasOwn(peers, name));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** The `source` export condition points at TypeScript sources that are not vendored. */
function stripSourceCondition(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSourceCondition);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([key]) => key !== 'source')
        .map(([key, v]) => [key, stripSourceCondition(v)]),
    );
  }
  return value;
}

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const info = await stat(join(entry.parentPath, entry.name));
    newest = Math.max(newest, info.mtimeMs);
  }
  return newest;
}

/** Serialize builds of one package across processes (parallel test workers, two `tiffin build`s). */
async function withBuildLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, '.tiffin-build.lock');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? Date.now());
      if (age > 300_000) await rm(lock, { recursive: true, force: true }); // left by a killed build
      if (Date.now() > deadline) throw new TiffinError(`Timed out waiting for the build lock ${lock}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function ensureBuilt(dir: string, pkg: PackageJson): Promise<void> {
  await withBuildLock(dir, () => buildIfStale(dir, pkg));
}

async function buildIfStale(dir: string, pkg: PackageJson): Promise<void> {
  const main = join(dir, typeof pkg.main === 'string' ? pkg.main : 'dist/index.js');
  const built = await stat(main).catch(() => null);
  const hasSources = await exists(join(dir, 'src'));
  if (built && (!hasSources || (await newestMtime(join(dir, 'src'))) <= built.mtimeMs)) return;
  if (!hasSources)
    throw new TiffinError(`${pkg.name} at ${dir} has no built ${main} and no sources to build it from`);
  const tsup = await findBin('tsup', dir);
  if (!tsup) throw MissingDependencyException.forPackage('tsup', `building ${pkg.name} before vendoring it`);
  await run(tsup, [], dir);
}

async function findBin(name: string, fromDir: string): Promise<string | null> {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', '.bin', name);
    if (await exists(candidate)) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

/** Run a command, collecting output for the error message; resolves on exit code 0. */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolvePromise(output);
      else
        reject(
          new TiffinError(
            `'${[command, ...args].join(' ')}' failed (exit ${code}) in ${cwd}:\n${output.trim().split('\n').slice(-15).join('\n')}`,
          ),
        );
    });
  });
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}
