import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { InvalidArgument, TiffinError } from '@tiffin/core/internal';

export const CONTAINER_BACKENDS = ['docker', 'podman', 'buildah'] as const;
export type ContainerBackend = (typeof CONTAINER_BACKENDS)[number];

/** No usable container tool; the message names each tool and why it was passed over. */
export class ContainerToolNotFound extends TiffinError {
  static override readonly code: string = 'CONTAINER_TOOL_NOT_FOUND';
}

/** A container tool that answered its probe. */
export interface ContainerTool {
  backend: ContainerBackend;
  executable: string;
}

/** What probing one tool found: usable, or why not. */
export type ToolProbe =
  | ({ usable: true } & ContainerTool)
  | { usable: false; backend: ContainerBackend; executable: string | null; reason: string };

/** How long a probe may take: a docker client whose daemon socket hangs must not stall the command. */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * The command that proves a tool can build, not just that it is installed: `docker info` needs the
 * daemon; `podman info` and `buildah info` need working storage.
 */
const PROBES: Record<ContainerBackend, string[]> = {
  docker: ['info', '--format', '{{.ServerVersion}}'],
  podman: ['info', '--format', '{{.Host.OCIRuntime.Name}}'],
  buildah: ['info'],
};

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

/** Find and probe one tool. */
export async function probeBackend(
  backend: ContainerBackend,
  path = process.env.PATH ?? '',
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ToolProbe> {
  const executable = await findExecutable(backend, path);
  if (!executable) return { usable: false, backend, executable, reason: 'not found on PATH' };
  const failure = await probeFailure(executable, PROBES[backend], path, timeoutMs);
  return failure === null
    ? { usable: true, backend, executable }
    : { usable: false, backend, executable, reason: failure };
}

export interface SelectBackendOptions {
  /** Only this tool (no fallback: the caller chose it). */
  backend?: ContainerBackend;
  path?: string;
  /** Told one line for each installed tool passed over, with the reason. */
  report?: (line: string) => void;
  timeoutMs?: number;
}

/**
 * The first usable tool of docker (with a live daemon), podman, buildah. Installed tools that fail their
 * probe are reported and skipped; none usable is a ContainerToolNotFound saying why for each.
 */
export async function selectBackend(options: SelectBackendOptions = {}): Promise<ContainerTool> {
  const path = options.path ?? process.env.PATH ?? '';
  if (options.backend !== undefined) {
    if (!isContainerBackend(options.backend)) {
      throw new InvalidArgument(
        `Unknown container backend '${options.backend}'; choices: ${CONTAINER_BACKENDS.join(', ')}`,
      );
    }
    const probe = await probeBackend(options.backend, path, options.timeoutMs);
    if (probe.usable) return { backend: probe.backend, executable: probe.executable };
    throw new ContainerToolNotFound(
      probe.executable === null
        ? `Container tool '${options.backend}' not found on PATH; install it or choose another backend (${CONTAINER_BACKENDS.join(', ')})`
        : `Container tool '${options.backend}' is installed but cannot build: ${probe.reason}`,
    );
  }
  const skipped: string[] = [];
  for (const backend of CONTAINER_BACKENDS) {
    const probe = await probeBackend(backend, path, options.timeoutMs);
    if (probe.usable) return { backend: probe.backend, executable: probe.executable };
    if (probe.executable !== null) {
      options.report?.(`${backend} is installed but cannot build (${probe.reason}); trying the next tool`);
      skipped.push(`${backend}: ${probe.reason}`);
    }
  }
  throw new ContainerToolNotFound(
    skipped.length === 0
      ? `No container tool found on PATH: install one of ${CONTAINER_BACKENDS.join(', ')} (or pass --backend)`
      : `No usable container tool (${skipped.join('; ')}); start the docker daemon or install podman or buildah`,
  );
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

/** Run a container tool's command; a non-zero exit is a TiffinError with the output's last lines. */
export function runTool(
  tool: ContainerTool,
  args: readonly string[],
  path: string,
  stdio: 'inherit' | 'pipe',
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(tool.executable, args, {
      stdio: ['ignore', stdio, stdio],
      env: { ...process.env, PATH: path },
    });
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-8192);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else {
        const tail = output.trim().split('\n').slice(-10).join('\n');
        reject(
          new TiffinError(`${tool.backend} ${args[0]} failed (exit ${code})${tail ? `:\n${tail}` : ''}`, {
            code: 'CONTAINER_BUILD_FAILED',
          }),
        );
      }
    });
  });
}

/** Run a probe; null when it exits 0 in time, else the reason in one line. */
function probeFailure(
  executable: string,
  args: string[],
  path: string,
  timeoutMs: number,
): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(executable, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PATH: path },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve(err.message);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) resolve(`'${args[0]}' gave no answer within ${timeoutMs / 1000} s`);
      else if (code === 0) resolve(null);
      else resolve(lastLine(stderr) ?? `'${args[0]}' exited with ${code}`);
    });
  });
}

function lastLine(text: string): string | undefined {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const line = lines.at(-1);
  return line && line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
