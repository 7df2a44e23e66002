import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTAINER_BACKENDS,
  ContainerToolNotFound,
  containerBuildArgs,
  containerize,
  findExecutable,
  PackageStore,
  probeBackend,
  resolveServeArgument,
  type StoredPackage,
  selectBackend,
} from '../src/index.js';
import { DAEMON_DOWN, standInTool as tool } from './container-tool-stand-in.js';

let dir: string;
let store: PackageStore;
let packageTag: string;
let packagePath: string;

/** A package named `tiny` holding one file (no APIs, models or dependencies). */
function tinyPackage(store: PackageStore, file: string, content: string): Promise<StoredPackage> {
  return store.create({
    name: 'tiny',
    fill: async (d) => {
      await writeFile(join(d, file), content);
      return {
        service: 'tiny',
        source: 'svc.ts',
        entry: 'service.js',
        apis: [],
        models: [],
        dependencies: {},
        labels: {},
      };
    },
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tiffin-containerize-'));
  store = new PackageStore(join(dir, 'packages'));
  const pkg = await tinyPackage(store, 'Dockerfile', 'FROM scratch\n');
  packageTag = pkg.tag;
  packagePath = pkg.path;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('container tool selection', () => {
  it('finds tools only when executable on the given PATH', async () => {
    expect(await findExecutable('podman', '')).toBeNull();
    const bin = join(dir, 'find');
    const file = await tool(bin, 'buildah');
    await chmod(file, 0o644);
    expect(await findExecutable('buildah', bin)).toBeNull();
    await chmod(file, 0o755);
    expect(await findExecutable('buildah', bin)).toBe(file);
  });

  it('passes over a docker client whose daemon does not answer, says why, and uses podman', async () => {
    const bin = join(dir, 'no-daemon');
    await tool(bin, 'docker', { exit: 1, error: DAEMON_DOWN });
    const podman = await tool(bin, 'podman');
    const lines: string[] = [];
    const chosen = await selectBackend({ path: bin, report: (line) => lines.push(line) });
    expect(chosen).toEqual({ backend: 'podman', executable: podman });
    expect(lines).toEqual([`docker is installed but cannot build (${DAEMON_DOWN}); trying the next tool`]);
  });

  it('gives up on a probe that hangs, within its timeout, and falls back to buildah', async () => {
    const bin = join(dir, 'hang');
    await tool(bin, 'docker', { hang: true });
    await tool(bin, 'podman', {
      exit: 125,
      error: 'Error: cannot set up storage\nError: overlay not supported',
    });
    const buildah = await tool(bin, 'buildah');
    const lines: string[] = [];
    const chosen = await selectBackend({ path: bin, report: (line) => lines.push(line), timeoutMs: 300 });
    expect(chosen.executable).toBe(buildah);
    expect(lines).toEqual([
      "docker is installed but cannot build ('info' gave no answer within 0.3 s); trying the next tool",
      'podman is installed but cannot build (Error: overlay not supported); trying the next tool',
    ]);
  });

  it('a chosen tool is not replaced: unusable, it is an error with the reason', async () => {
    const bin = join(dir, 'chosen');
    await tool(bin, 'docker', { exit: 1, error: DAEMON_DOWN });
    await tool(bin, 'podman');
    await expect(selectBackend({ path: bin, backend: 'docker' })).rejects.toThrow(
      `Container tool 'docker' is installed but cannot build: ${DAEMON_DOWN}`,
    );
    await expect(selectBackend({ path: bin, backend: 'buildah' })).rejects.toThrow(
      "Container tool 'buildah' not found on PATH; install it or choose another backend (docker, podman, buildah)",
    );
  });

  it('none usable: one error naming each installed tool and why', async () => {
    const bin = join(dir, 'none-usable');
    await tool(bin, 'docker', { exit: 1, error: DAEMON_DOWN });
    await tool(bin, 'buildah', { exit: 1, error: 'permission denied' });
    const attempt = selectBackend({ path: bin });
    await expect(attempt).rejects.toBeInstanceOf(ContainerToolNotFound);
    await expect(attempt).rejects.toThrow(
      `No usable container tool (docker: ${DAEMON_DOWN}; buildah: permission denied); start the docker daemon or install podman or buildah`,
    );
  });

  it("probes this machine's own tools for real, and chooses by what the probes said", async () => {
    for (const backend of CONTAINER_BACKENDS) {
      const probe = await probeBackend(backend);
      if (probe.executable === null)
        expect(probe).toMatchObject({ usable: false, reason: 'not found on PATH' });
      else if (probe.usable) expect(probe.executable).toBe(await findExecutable(backend));
      else expect(probe.reason.length).toBeGreaterThan(0);
    }
    // One selection pass: each installed tool before the chosen one was passed over with a reason.
    const lines: string[] = [];
    const chosen = await selectBackend({ report: (line) => lines.push(line) }).catch((err: unknown) => {
      expect(err).toBeInstanceOf(ContainerToolNotFound);
      return null;
    });
    const index = chosen ? CONTAINER_BACKENDS.indexOf(chosen.backend) : CONTAINER_BACKENDS.length;
    const installedBefore: string[] = [];
    for (const backend of CONTAINER_BACKENDS.slice(0, index))
      if (await findExecutable(backend)) installedBefore.push(backend);
    expect(lines.map((line) => line.split(' ')[0])).toEqual(installedBefore);
    for (const line of lines)
      expect(line).toMatch(/^\w+ is installed but cannot build \(.+\); trying the next tool$/);
  }, 60_000);
});

describe('containerize', () => {
  it('builds the command line for each backend (docker format keeps HEALTHCHECK for podman/buildah)', () => {
    const options = {
      contextDir: '/pkg',
      imageTag: 'svc:1',
      baseImage: 'localhost/base:1',
      extraArgs: ['--isolation', 'chroot'],
    };
    expect(containerBuildArgs('docker', options)).toEqual([
      'build',
      '-f',
      '/pkg/Dockerfile',
      '-t',
      'svc:1',
      '--build-arg',
      'BASE_IMAGE=localhost/base:1',
      '--isolation',
      'chroot',
      '/pkg',
    ]);
    expect(containerBuildArgs('podman', { contextDir: '/pkg', imageTag: 'svc:1' })).toEqual([
      'build',
      '--format',
      'docker',
      '-f',
      '/pkg/Dockerfile',
      '-t',
      'svc:1',
      '/pkg',
    ]);
    expect(containerBuildArgs('buildah', { contextDir: '/pkg', imageTag: 'svc:1' })[0]).toBe('build');
  });

  it('fails with one line naming the choices when no tool is installed', async () => {
    const attempt = containerize({ tag: 'anything', path: '', packageStore: store });
    await expect(attempt).rejects.toBeInstanceOf(ContainerToolNotFound);
    await expect(attempt).rejects.toThrow(
      /^No container tool found on PATH: install one of docker, podman, buildah \(or pass --backend\)$/,
    );
  });

  it('runs the chosen tool on the package folder and reports the tool it uses', async () => {
    const bin = join(dir, 'build-run');
    await tool(bin, 'docker', { exit: 1, error: DAEMON_DOWN });
    const podman = await tool(bin, 'podman');
    const lines: string[] = [];
    const result = await containerize({
      tag: 'tiny',
      path: bin,
      packageStore: store,
      baseImage: 'localhost/node:20',
      stdio: 'pipe',
      report: (line) => lines.push(line),
    });
    expect(result.backend).toBe('podman');
    expect(result.imageTag).toBe(packageTag);
    expect(lines.slice(-2)).toEqual([
      `Using podman (${podman})`,
      `Building image ${packageTag} from package ${packageTag} with podman (its output follows)`,
    ]);
    const log = await readFile(join(bin, 'podman.log'), 'utf8');
    expect(log).toContain(
      `ARGS build --format docker -f ${join(packagePath, 'Dockerfile')} -t ${packageTag} --build-arg BASE_IMAGE=localhost/node:20 ${packagePath}`,
    );
    await expect(
      containerize({ tag: 'tiny', path: bin, packageStore: store, baseImage: 'a', baseRootfs: 'b' }),
    ).rejects.toThrow('Give either a base image or a base root filesystem, not both');
  });

  it('--base-rootfs: makes a base image from the folder (no /proc, /dev or device entries), adds Node, builds on it', async () => {
    const rootfs = join(dir, 'rootfs');
    await mkdir(join(rootfs, 'usr', 'bin'), { recursive: true });
    await writeFile(join(rootfs, 'usr', 'bin', 'dash'), '#!fake shell');
    await symlink('dash', join(rootfs, 'usr', 'bin', 'sh'));
    await symlink('usr/bin', join(rootfs, 'bin'));
    await mkdir(join(rootfs, 'proc', 'self'), { recursive: true });
    await writeFile(join(rootfs, 'proc', 'self', 'status'), 'not for the image');
    await mkdir(join(rootfs, 'dev'));
    await symlink('/proc/self/fd', join(rootfs, 'dev', 'fd'));
    await writeFile(join(rootfs, 'etc-ünïcode.txt'), 'kept');
    await mkdir(join(rootfs, 'var', 'lib', 'apt', 'lists'), { recursive: true });
    await writeFile(join(rootfs, 'var', 'lib', 'apt', 'lists', 'deb.debian.org_Packages'), 'package list');
    const bin = join(dir, 'rootfs-run');
    await tool(bin, 'buildah');
    const lines: string[] = [];
    const result = await containerize({
      tag: 'tiny',
      path: [bin, process.env.PATH].join(delimiter), // tar for the stand-in's listing
      packageStore: store,
      backend: 'buildah',
      baseRootfs: rootfs,
      stdio: 'pipe',
      report: (line) => lines.push(line),
    });
    expect(result.baseImage).toMatch(/^localhost\/tiffin-base-rootfs:[0-9a-f]{12}$/);
    expect(lines).toEqual([
      `Using buildah (${join(bin, 'buildah')})`,
      `adding this machine's Node ${process.version} and npm to the base (${rootfs} has none)`,
      `building base image ${result.baseImage} from ${rootfs}`,
      `Building image ${result.imageTag} from package ${result.packageTag} with buildah (its output follows)`,
    ]);
    const log = await readFile(join(bin, 'buildah.log'), 'utf8');
    const [base, pkg] = log.split(/^ARGS /m).filter(Boolean) as [string, string];
    expect(base).toMatch(new RegExp(`^build --format docker -f \\S+/Dockerfile -t ${result.baseImage} `));
    expect(base).toContain('FROM scratch\nADD rootfs.tar /\nCOPY node/ /usr/local/\n');
    expect(base).toContain('ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(base).toMatch(/\.\/usr\/bin\/sh -> dash/);
    expect(base).toMatch(/\.\/bin -> usr\/bin/);
    expect(base).toContain('./etc-ünïcode.txt');
    expect(base).toMatch(/\.\/proc\/$/m);
    expect(base).not.toContain('status');
    expect(base).toMatch(/\.\/var\/lib\/apt\/lists\/$/m);
    expect(base).not.toContain('deb.debian.org_Packages');
    expect(base).not.toContain('./dev/fd');
    expect(base).toMatch(/ npm -> \.\.\/lib\/node_modules\/npm\/bin\/npm-cli\.js/);
    expect(pkg).toContain(`--build-arg BASE_IMAGE=${result.baseImage} ${packagePath}`);
  }, 60_000);

  it('a build that fails names the tool and exit code, with the output, and hints chroot isolation for runtime errors', async () => {
    const bin = join(dir, 'build-fails');
    const cgroups = 'error running container: cgroups in hybrid mode not supported';
    await tool(bin, 'podman', { buildError: cgroups });
    const path = [bin, process.env.PATH].join(delimiter);
    const attempt = containerize({ tag: 'tiny', path, packageStore: store, stdio: 'pipe' });
    const hint =
      'Hint: if podman said it cannot create a container (e.g. "cgroups in hybrid mode not supported", inside another container), add --backend-arg=--isolation=chroot';
    await expect(attempt).rejects.toThrow(`podman build failed (exit 1):\n${cgroups}\n${hint}`);
    // As the CLI runs it, the tool's output goes to the terminal, not into the message: the hint is still given.
    const shown = containerize({ tag: 'tiny', path, packageStore: store, stdio: 'inherit' });
    await expect(shown).rejects.toThrow(hint);
    const chroot = containerize({
      tag: 'tiny',
      path,
      packageStore: store,
      stdio: 'pipe',
      backendArgs: ['--isolation=chroot'],
    });
    await expect(chroot).rejects.toThrow(new RegExp(`^podman build failed \\(exit 1\\):\n${cgroups}$`));
  });

  it('--base-rootfs: a root filesystem with its own Node keeps it (nothing added)', async () => {
    const rootfs = join(dir, 'rootfs-with-node');
    await mkdir(join(rootfs, 'bin'), { recursive: true });
    await writeFile(join(rootfs, 'bin', 'sh'), '#!fake shell');
    await mkdir(join(rootfs, 'usr', 'local', 'bin'), { recursive: true });
    await writeFile(join(rootfs, 'usr', 'local', 'bin', 'node-20'), '#!fake node');
    // An absolute link resolves inside the root filesystem, not on this machine.
    await symlink('/usr/local/bin/node-20', join(rootfs, 'usr', 'local', 'bin', 'node'));
    const bin = join(dir, 'rootfs-node-run');
    await tool(bin, 'podman');
    const lines: string[] = [];
    const result = await containerize({
      tag: 'tiny',
      path: [bin, process.env.PATH].join(delimiter),
      packageStore: store,
      backend: 'podman', // this machine's own tools come later on the PATH
      baseRootfs: rootfs,
      stdio: 'pipe',
      report: (line) => lines.push(line),
    });
    expect(lines).toEqual([
      `Using podman (${join(bin, 'podman')})`,
      `building base image ${result.baseImage} from ${rootfs}`,
      `Building image ${result.imageTag} from package ${result.packageTag} with podman (its output follows)`,
    ]);
    const log = await readFile(join(bin, 'podman.log'), 'utf8');
    expect(log).toContain('FROM scratch\nADD rootfs.tar /\n');
    expect(log).not.toContain('COPY node/');
  });

  it('--base-rootfs: a folder that is not a root filesystem is a clear error', async () => {
    const bin = join(dir, 'rootfs-bad');
    await tool(bin, 'podman');
    const empty = join(dir, 'empty-rootfs');
    await mkdir(empty);
    await expect(
      containerize({ tag: 'tiny', path: bin, packageStore: store, baseRootfs: empty }),
    ).rejects.toThrow(
      `--base-rootfs ${empty} is not a root filesystem (no /bin/sh); make one with: debootstrap --variant=minbase bookworm ${empty}`,
    );
    await expect(
      containerize({ tag: 'tiny', path: bin, packageStore: store, baseRootfs: join(dir, 'absent') }),
    ).rejects.toThrow(`--base-rootfs ${join(dir, 'absent')}: no such folder`);
  });
});

describe('resolveServeArgument', () => {
  it('keeps service file arguments and resolves package tags to their entry module', async () => {
    const file = join(dir, 'svc.ts');
    await writeFile(file, 'export {}');
    expect(await resolveServeArgument(`${file}:api`)).toBe(`${file}:api`);
    expect(await resolveServeArgument('typo/service.ts')).toBe('typo/service.ts');
    const store = new PackageStore(join(dir, 'serve-packages'));
    await expect(resolveServeArgument('absent', store)).rejects.toThrow(/No package named 'absent'/);
    const pkg = await tinyPackage(store, 'service.js', 'export default null;');
    expect(await resolveServeArgument('tiny', store)).toBe(join(pkg.path, 'service.js'));
  });
});
