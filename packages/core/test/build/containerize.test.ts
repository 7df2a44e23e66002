import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ContainerToolNotFound,
  containerBuildArgs,
  containerize,
  detectBackend,
  findExecutable,
} from '../../src/build/index.js';
import { PackageStore, resolveServeArgument } from '../../src/store/index.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tiffin-containerize-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
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

  it('finds tools only when executable on the given PATH', async () => {
    expect(await findExecutable('podman', '')).toBeNull();
    expect(await detectBackend('')).toBeNull();
    const tool = join(dir, 'buildah');
    await writeFile(tool, '#!/bin/sh\nexit 0\n');
    await chmod(tool, 0o644);
    expect(await findExecutable('buildah', dir)).toBeNull();
    await chmod(tool, 0o755);
    expect(await findExecutable('buildah', dir)).toBe(tool);
    expect(await detectBackend(dir)).toEqual({ backend: 'buildah', executable: tool });
  });

  it('fails with one line naming the choices when no tool is installed', async () => {
    const store = new PackageStore(join(dir, 'packages'));
    const attempt = containerize({ tag: 'anything', path: '', packageStore: store });
    await expect(attempt).rejects.toBeInstanceOf(ContainerToolNotFound);
    await expect(attempt).rejects.toThrow(
      /^No container tool found on PATH: install one of docker, podman, buildah \(or pass --backend\)$/,
    );
  });
});

describe('resolveServeArgument', () => {
  it('keeps service file arguments and resolves package tags to their entry module', async () => {
    const file = join(dir, 'svc.ts');
    await writeFile(file, 'export {}');
    expect(await resolveServeArgument(`${file}:api`)).toBe(`${file}:api`);
    expect(await resolveServeArgument('typo/service.ts')).toBe('typo/service.ts');
    const store = new PackageStore(join(dir, 'packages'));
    await expect(resolveServeArgument('absent', store)).rejects.toThrow(/No package named 'absent'/);
    const pkg = await store.create({
      name: 'tiny',
      fill: async (d) => {
        await writeFile(join(d, 'service.js'), 'export default null;');
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
    expect(await resolveServeArgument('tiny', store)).toBe(join(pkg.path, 'service.js'));
  });
});
