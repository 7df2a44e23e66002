import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { registerBuild } from '../src/commands/build.js';
import { registerContainerize } from '../src/commands/containerize.js';
import { registerKubernetes } from '../src/commands/kubernetes.js';
import { registerModels } from '../src/commands/models.js';
import { registerPackageCommands } from '../src/commands/packages.js';
import { registerServe } from '../src/commands/serve.js';
import { createProgram } from '../src/program.js';

/** Stand-ins for docker/podman/buildah (shared with @tiffin/build's containerize tests; outside this tsc root). */
const { standInTool, DAEMON_DOWN } = (await import(
  new URL('../../build/test/container-tool-stand-in.ts', import.meta.url).href
)) as {
  standInTool: (bin: string, name: string, info?: { exit?: number; error?: string }) => Promise<string>;
  DAEMON_DOWN: string;
};

const CLI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = join(CLI_DIR, '..', '..');
const QUICKSTART = join(REPO, 'examples', 'quickstart', 'service.ts');
const TSX = pathToFileURL(createRequire(join(CLI_DIR, 'package.json')).resolve('tsx')).href;
const BIN = join(CLI_DIR, 'src', 'bin.ts');

let home: string;
let clean: string;

/** Start `tiffin ...` from sources in `cwd` with a private TIFFIN_HOME (and optionally another PATH). */
function start(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['--conditions=source', '--import', TSX, BIN, ...args], {
    cwd,
    env: { ...process.env, TIFFIN_HOME: home, TIFFIN_MODELS_DIR: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Run `tiffin ...` in this process (fast) and capture what it prints. */
async function tiffin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = createProgram([
    registerServe,
    registerBuild,
    registerPackageCommands,
    registerModels,
    registerContainerize,
    registerKubernetes,
  ]);
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  process.exitCode = undefined;
  try {
    await program.parseAsync(['node', 'tiffin', ...args]);
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, stdout, stderr };
}

/** Run `tiffin ...` as its own process. */
async function tiffinProcess(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child = start(args, options.cwd ?? REPO, options.env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

let previousHome: string | undefined;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'tiffin-cli-home-'));
  clean = await mkdtemp(join(tmpdir(), 'tiffin-cli-clean-'));
  previousHome = process.env.TIFFIN_HOME;
  process.env.TIFFIN_HOME = home;
  delete process.env.TIFFIN_MODELS_DIR;
});

afterAll(async () => {
  if (previousHome === undefined) delete process.env.TIFFIN_HOME;
  else process.env.TIFFIN_HOME = previousHome;
  await rm(home, { recursive: true, force: true });
  await rm(clean, { recursive: true, force: true });
});

describe('tiffin build / list / serve <tag>', () => {
  let tag = '';

  it('builds the quickstart into a package and prints the tag and next steps', async () => {
    const result = await tiffin(['build', QUICKSTART, '--no-lockfile', '--label', 'stage=test']);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    tag = /Successfully built package (quickstart:[0-9a-f]{16})/.exec(result.stdout)?.[1] ?? '';
    expect(tag).not.toBe('');
    // Next steps that run as printed (after the install, `tiffin` is `npx tiffin`).
    expect(result.stdout).toContain(`npx tiffin serve ${tag}`);
    expect(result.stdout).toContain(`npx tiffin containerize ${tag}`);
    expect(result.stdout).not.toMatch(/: +tiffin /);
    // Each step on stderr as it starts (plain lines: no terminal here).
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      `Loading the service from ${relative(process.cwd(), QUICKSTART)}...`,
      'Bundling the service code (esbuild)...',
      'Resolving dependencies...',
      'Writing package.json, Dockerfile and Kubernetes manifests...',
    ]);
    // --version/--name reach the build command (not the program's own --version).
    const named = await tiffin(['build', QUICKSTART, '--no-lockfile', '--name', 'qs', '--version', '1.0']);
    expect(named.stdout).toContain('Successfully built package qs:1.0');
    expect((await tiffin(['delete', 'qs:1.0'])).stdout).toContain('Deleted package qs:1.0');
  }, 180_000);

  it('writes the manifests with the Kubernetes options given, and a KServe InferenceService with --kserve', async () => {
    const result = await tiffin([
      'build',
      QUICKSTART,
      '--no-lockfile',
      '--name',
      'qs-k8s',
      '--version',
      '1',
      '--image',
      'registry.example/qs:1',
      '--replicas',
      '2',
      '--max-replicas',
      '6',
      '--memory-limit',
      '1Gi',
      '--kserve',
    ]);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    const dir = join(home, 'packages', 'qs-k8s', '1');
    const docs = parseAllDocuments(await readFile(join(dir, 'kubernetes.yaml'), 'utf8')).map((d) => d.toJS());
    expect(docs.map((d) => d.kind)).toEqual([
      'Deployment',
      'Service',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
    ]);
    const container = docs[0].spec.template.spec.containers[0];
    expect(docs[0].spec.replicas).toBe(2);
    expect(container.image).toBe('registry.example/qs:1');
    expect(container.resources.limits.memory).toBe('1Gi');
    expect(docs[2].spec).toMatchObject({ minReplicas: 2, maxReplicas: 6 });
    const isvc = parse(await readFile(join(dir, 'inferenceservice.yaml'), 'utf8'));
    expect(isvc.kind).toBe('InferenceService');
    expect(isvc.spec.predictor.containers[0].image).toBe('registry.example/qs:1');
    // A bad option fails before any build work, with the option named.
    const bad = await tiffin(['build', QUICKSTART, '--no-lockfile', '--memory', '2 GB']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      "tiffin: error: memoryRequest '2 GB' is not a Kubernetes quantity (e.g. 500m, 2, 512Mi, 4Gi)\n",
    );
    expect((await tiffin(['delete', 'qs-k8s:1'])).code).toBe(0);
  }, 180_000);

  it('lists the package as a table and as JSON, and shows its manifest', async () => {
    const table = await tiffin(['list']);
    expect(table.stdout.split('\n')[0]).toMatch(/^Tag\s+Size\s+Model Size\s+Creation Time$/);
    expect(table.stdout).toContain(tag);
    const json = JSON.parse((await tiffin(['list', '--output', 'json'])).stdout);
    expect(json).toEqual([
      expect.objectContaining({ tag, service: 'quickstart', labels: { stage: 'test' } }),
    ]);
    const manifest = JSON.parse((await tiffin(['get', 'quickstart', '-o', 'json'])).stdout);
    expect(manifest.apis.map((a: { name: string }) => a.name)).toContain('classify');
  }, 60_000);

  it('serves the built package by tag from a clean folder, and its APIs answer', async () => {
    const server = start(['serve', tag, '--port', '0'], clean);
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ready line: ${output}`)), 60_000);
        server.stdout?.on('data', (d: Buffer) => {
          output += d.toString();
          const match = /"msg":"ready","url":"([^"]+)"/.exec(output);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        });
        server.stderr?.on('data', (d: Buffer) => {
          output += d.toString();
        });
        server.on('close', () => reject(new Error(`serve exited: ${output}`)));
      });
      const res = await fetch(`${url}/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '[[5.1,3.5,1.4,0.2],[6.7,3.0,5.2,2.3]]',
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([0, 2]);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    } finally {
      server.kill('SIGTERM');
    }
  }, 90_000);

  it('exports, deletes and imports the package', async () => {
    const archive = join(clean, 'qs.tar.gz');
    expect((await tiffin(['export', tag, archive])).stdout).toContain(`Exported package ${tag}`);
    expect((await tiffin(['delete', tag])).stdout).toContain(`Deleted package ${tag}`);
    expect((await tiffin(['list', '-o', 'json'])).stdout.trim()).toBe('[]');
    const missing = await tiffin(['get', tag]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^tiffin: error: Package '.*' not found/);
    expect((await tiffin(['import', archive])).stdout).toContain(`Imported package ${tag}`);
  }, 60_000);

  it('tiffin kubernetes <tag> prints the manifests for another image, ready for kubectl apply -f -', async () => {
    const result = await tiffin([
      'kubernetes',
      'quickstart',
      '--image',
      'registry.example/ml/quickstart:7',
      '--kserve',
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')[0]).toBe(`# Generated by tiffin kubernetes for ${tag}`);
    const docs = parseAllDocuments(result.stdout).map((d) => d.toJS());
    expect(docs.map((d) => d.kind)).toEqual([
      'Deployment',
      'Service',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'InferenceService',
    ]);
    expect(docs[0].spec.template.spec.containers[0].image).toBe('registry.example/ml/quickstart:7');
    expect(docs[0].metadata.labels['app.kubernetes.io/version']).toBe(tag.split(':')[1]);
    const missing = await tiffin(['kubernetes', 'absent']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^tiffin: error: .*'absent'/);
  });
});

describe('tiffin serve <tag> of a package whose manifest names an entry module outside it', () => {
  /** Export a stored package as the archive a user would be sent; `tamper` may rewrite its files first. */
  async function shared(tag: string, tamper?: (dir: string) => Promise<void>): Promise<string> {
    const archive = join(clean, `${tag.replace(':', '-')}.tar.gz`);
    expect((await tiffin(['export', tag, archive])).code).toBe(0);
    expect((await tiffin(['delete', tag])).code).toBe(0);
    if (tamper) {
      const dir = await mkdtemp(join(clean, 'unpacked-'));
      execFileSync('tar', ['-xzf', archive, '-C', dir]);
      await tamper(dir);
      execFileSync('tar', ['-czf', archive, '-C', dir, '.']);
    }
    return archive;
  }

  /** A package whose manifest's entry is `entry` (the store takes the manifest as the builder gives it). */
  async function hostilePackage(name: string, entry: string): Promise<string> {
    const { PackageStore } = await import('@tiffin/build');
    const built = await new PackageStore().create({
      name,
      version: '1',
      fill: async (dir) => {
        await writeFile(join(dir, 'linked.mjs'), 'export default null;\n');
        return {
          service: name,
          source: 'service.ts',
          entry,
          apis: [],
          models: [],
          dependencies: {},
          labels: {},
        };
      },
    });
    return built.tag;
  }

  it('refuses ../ and absolute entries with a one-line error, and runs nothing', async () => {
    // A module outside the package that would announce itself if it ran.
    const outside = join(clean, 'outside.mjs');
    await writeFile(outside, "process.stdout.write('OUTSIDE MODULE RAN\\n');\nexport default null;\n");
    const cases: Array<[string, string, RegExp]> = [
      [
        'dotdot',
        `${'../'.repeat(4)}outside.mjs`, // climbs out of the package: the hostile input itself
        /entry module '(\.\.\/){4}outside\.mjs' has an empty, '\.' or '\.\.' segment; refused$/,
      ],
      ['absolute', outside, /entry module '\/.*\/outside\.mjs' is absolute; refused$/],
    ];
    for (const [name, entry, message] of cases) {
      const tag = await hostilePackage(`hostile_${name}`, entry);
      expect((await tiffin(['import', await shared(tag)])).stdout).toContain(`Imported package ${tag}`);
      const result = await tiffin(['serve', tag]);
      expect(result.code, name).toBe(1);
      expect(result.stderr.trim(), name).toMatch(/^tiffin: error: Package entry module/);
      expect(result.stderr.trim(), name).toMatch(message);
      expect(result.stdout, name).not.toContain('OUTSIDE MODULE RAN');
    }
  }, 60_000);

  it('an entry module that is a symbolic link out of the package is not imported, nor served', async () => {
    const outside = join(clean, 'outside-linked.mjs');
    await writeFile(outside, "process.stdout.write('OUTSIDE MODULE RAN\\n');\nexport default null;\n");
    const tag = await hostilePackage('hostile_symlinked', 'linked.mjs');
    const archive = await shared(tag, async (dir) => {
      await rm(join(dir, 'linked.mjs'));
      await symlink(relative(dir, outside), join(dir, 'linked.mjs'));
    });
    const imported = await tiffin(['import', archive]);
    expect(imported.code).toBe(1);
    expect(imported.stderr.trim()).toBe(
      'tiffin: error: TAR_ENTRY_ERROR: linkpath escapes extraction directory',
    );
    const result = await tiffin(['serve', tag]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^tiffin: error: Package '.*' not found/);
    expect(result.stdout).not.toContain('OUTSIDE MODULE RAN');

    // A link planted in the store itself (not through an archive) is refused when the package is served.
    const planted = await hostilePackage('hostile_planted', 'linked.mjs');
    const stored = join(home, 'packages', 'hostile_planted', '1', 'linked.mjs');
    await rm(stored);
    await symlink(outside, stored);
    const served = await tiffin(['serve', planted]);
    expect(served.code).toBe(1);
    expect(served.stderr.trim()).toBe(
      'tiffin: error: Package entry module leads outside its folder through a symbolic link; refused',
    );
    expect(served.stdout).not.toContain('OUTSIDE MODULE RAN');
  }, 60_000);
});

describe('tiffin models', () => {
  it('lists, gets, exports, deletes and imports models', async () => {
    const src = join(clean, 'weights.bin');
    await writeFile(src, Buffer.alloc(2048, 1));
    const { ModelStore } = await import('@tiffin/core');
    const saved = await new ModelStore().save({ name: 'iris', paths: [src], module: '@tiffin/example' });
    const table = (await tiffin(['models', 'list'])).stdout.split('\n');
    expect(table[0]).toMatch(/^Tag\s+Module\s+Size\s+Creation Time$/);
    expect(table[1]).toMatch(
      new RegExp(
        `^${saved.tag}\\s+@tiffin/example\\s+2\\.00 KiB\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`,
      ),
    );
    const json = JSON.parse((await tiffin(['models', 'list', '--output', 'json'])).stdout);
    expect(json).toEqual([
      expect.objectContaining({ tag: saved.tag, module: '@tiffin/example', size: 2048 }),
    ]);
    expect((await tiffin(['models', 'get', 'iris:latest'])).stdout).toContain(`tag: ${saved.tag}`);
    const archive = join(clean, 'iris.tar.gz');
    await tiffin(['models', 'export', 'iris', archive]);
    expect((await tiffin(['models', 'delete', saved.tag])).stdout).toContain(`Deleted model ${saved.tag}`);
    expect((await tiffin(['models', 'import', archive])).stdout).toContain(`Imported model ${saved.tag}`);
    expect(
      await readFile(join(home, 'models', 'iris', saved.manifest.version, 'files', 'weights.bin')),
    ).toHaveLength(2048);
  }, 60_000);
});

describe('tiffin containerize', () => {
  it('gives a one-line error naming the choices when no container tool is installed', async () => {
    const path = process.env.PATH;
    process.env.PATH = '';
    let result: Awaited<ReturnType<typeof tiffin>>;
    let chosen: Awaited<ReturnType<typeof tiffin>>;
    try {
      result = await tiffin(['containerize', 'quickstart:latest']);
      chosen = await tiffin(['containerize', 'quickstart:latest', '--backend', 'podman']);
    } finally {
      process.env.PATH = path;
    }
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'tiffin: error: No container tool found on PATH: install one of docker, podman, buildah (or pass --backend)\n',
    );
    expect(chosen.stderr).toBe(
      "tiffin: error: Container tool 'podman' not found on PATH; install it or choose another backend (docker, podman, buildah)\n",
    );
    // commander rejects an unknown backend, and two bases, before any lookup (it exits: run as a process).
    const unknown = await tiffinProcess(['containerize', 'quickstart:latest', '--backend', 'rkt'], {
      env: { PATH: '' },
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Allowed choices are docker, podman, buildah');
    const twoBases = await tiffinProcess(
      ['containerize', 'quickstart:latest', '--base-image', 'node:20', '--base-rootfs', './rootfs'],
      { env: { PATH: '' } },
    );
    expect(twoBases.code).toBe(1);
    expect(twoBases.stderr).toContain(
      "option '--base-image <image>' cannot be used with option '--base-rootfs <dir>'",
    );
  }, 60_000);

  it('says why a docker client without daemon is passed over, and which tool it uses', async () => {
    const bin = join(clean, 'tools');
    await standInTool(bin, 'docker', { exit: 1, error: DAEMON_DOWN });
    const podman = await standInTool(bin, 'podman');
    await tiffin(['build', QUICKSTART, '--no-lockfile', '--name', 'qs-image', '--version', '1']);
    const path = process.env.PATH;
    // The stand-ins first; the rest of PATH for the commands the stand-in itself runs (cat, tar).
    process.env.PATH = `${bin}:${path}`;
    let result: Awaited<ReturnType<typeof tiffin>>;
    try {
      result = await tiffin(['containerize', 'qs-image:1', '--base-image', 'localhost/node:20']);
    } finally {
      process.env.PATH = path;
    }
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 4)).toEqual([
      `docker is installed but cannot build (${DAEMON_DOWN}); trying the next tool`,
      `Using podman (${podman})`,
      'Building image qs-image:1 from package qs-image:1 with podman (its output follows)',
      'Successfully built image qs-image:1 with podman',
    ]);
    expect(result.stdout).toContain('podman run --rm -p 3000:3000 qs-image:1');
    const log = await readFile(join(bin, 'podman.log'), 'utf8');
    expect(log).toContain(
      `-t qs-image:1 --build-arg BASE_IMAGE=localhost/node:20 ${join(home, 'packages', 'qs-image', '1')}`,
    );
    // The Dockerfile the tool was given: non-root user, health check on /readyz.
    expect(log).toMatch(/^USER 1000:1000$/m);
    expect(log).toMatch(/^HEALTHCHECK .*\n\s+CMD .*\/readyz/m);
    expect((await tiffin(['delete', 'qs-image:1'])).code).toBe(0);
  }, 180_000);
});
