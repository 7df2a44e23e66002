import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { InvalidArgument, TiffinError } from '../errors/index.js';
import { PackageStore } from '../store/package-store.js';

export const CONTAINER_BACKENDS = ['docker', 'podman', 'buildah'] as const;
export type ContainerBackend = (typeof CONTAINER_BACKENDS)[number];

/** No usable container tool; the message is one line naming the choices. */
export class ContainerToolNotFound extends TiffinError {}

export interface ContainerizeOptions {
  /** Package tag (`name`, `name:latest`, `name:version`). */
  tag: string;
  /** Default: the first installed of docker (with a reachable daemon), podman, buildah. */
  backend?: ContainerBackend;
  /** Image reference; default `<name>:<version>`. */
  imageTag?: string;
  /** Overrides the Dockerfile's BASE_IMAGE build argument. */
  baseImage?: string;
  /** Extra arguments for the tool's build command (e.g. `--isolation chroot`). */
  backendArgs?: string[];
  packageStore?: PackageStore;
  /** Search path for the tools (default: $PATH). */
  path?: string;
  /** Where the tool's output goes (default: inherited from this process). */
  stdio?: 'inherit' | 'pipe';
}

export interface ContainerizeResult {
  backend: ContainerBackend;
  imageTag: string;
  command: string[];
}

export function isContainerBackend(value: string): value is ContainerBackend {
  return (CONTAINER_BACKENDS as readonly string[]).includes(value);
}

/** The executable `name` on `path`, or null. */
export async function findExecutable(name: string, path = process.env.PATH ?? ''): Promise<string | null> {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

/** Pick a backend: docker when its daemon answers, else podman, else buildah, else a docker client without daemon. */
export async function detectBackend(
  path = process.env.PATH ?? '',
): Promise<{ backend: ContainerBackend; executable: string } | null> {
  const docker = await findExecutable('docker', path);
  if (docker && (await succeeds(docker, ['version', '--format', '{{.Server.Version}}'])))
    return { backend: 'docker', executable: docker };
  for (const backend of ['podman', 'buildah'] as const) {
    const executable = await findExecutable(backend, path);
    if (executable) return { backend, executable };
  }
  return docker ? { backend: 'docker', executable: docker } : null;
}

/** The build command line for a backend (without the executable). */
export function containerBuildArgs(
  backend: ContainerBackend,
  options: { contextDir: string; imageTag: string; baseImage?: string; extraArgs?: readonly string[] },
): string[] {
  const args = ['build'];
  // The docker image format keeps HEALTHCHECK (the OCI format drops it).
  if (backend !== 'docker') args.push('--format', 'docker');
  args.push('-f', join(options.contextDir, 'Dockerfile'), '-t', options.imageTag);
  if (options.baseImage) args.push('--build-arg', `BASE_IMAGE=${options.baseImage}`);
  args.push(...(options.extraArgs ?? []), options.contextDir);
  return args;
}

/** Build an OCI image from a stored package with docker, podman or buildah. */
export async function containerize(options: ContainerizeOptions): Promise<ContainerizeResult> {
  const path = options.path ?? process.env.PATH ?? '';
  let tool: { backend: ContainerBackend; executable: string } | null;
  if (options.backend !== undefined) {
    if (!isContainerBackend(options.backend)) {
      throw new InvalidArgument(
        `Unknown container backend '${options.backend}'; choices: ${CONTAINER_BACKENDS.join(', ')}`,
      );
    }
    const executable = await findExecutable(options.backend, path);
    if (!executable) {
      throw new ContainerToolNotFound(
        `Container tool '${options.backend}' not found on PATH; install it or choose another backend (${CONTAINER_BACKENDS.join(', ')})`,
      );
    }
    tool = { backend: options.backend, executable };
  } else {
    tool = await detectBackend(path);
    if (!tool) {
      throw new ContainerToolNotFound(
        `No container tool found on PATH: install one of ${CONTAINER_BACKENDS.join(', ')} (or pass --backend)`,
      );
    }
  }
  const pkg = await (options.packageStore ?? new PackageStore()).get(options.tag);
  const imageTag = options.imageTag ?? pkg.tag;
  const args = containerBuildArgs(tool.backend, {
    contextDir: pkg.path,
    imageTag,
    baseImage: options.baseImage,
    extraArgs: options.backendArgs,
  });
  await new Promise<void>((resolve, reject) => {
    const child = spawn(tool.executable, args, {
      stdio: options.stdio === 'pipe' ? 'pipe' : 'inherit',
      env: { ...process.env, PATH: path },
    });
    let output = '';
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else {
        const tail = output.trim().split('\n').slice(-10).join('\n');
        reject(new TiffinError(`${tool.backend} build failed (exit ${code})${tail ? `:\n${tail}` : ''}`));
      }
    });
  });
  return { backend: tool.backend, imageTag, command: [tool.executable, ...args] };
}

function succeeds(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    const timer = setTimeout(() => child.kill(), 5000);
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}
