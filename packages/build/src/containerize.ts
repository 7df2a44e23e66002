import { InvalidArgument } from '@tiffin/core/internal';
import { type ContainerBackend, containerBuildArgs, runTool, selectBackend } from './container-tools.js';
import { buildRootfsBase } from './rootfs-base.js';
import { PackageStore } from './store/package-store.js';

export interface ContainerizeOptions {
  /** Package tag (`name`, `name:latest`, `name:version`). */
  tag: string;
  /** Default: the first usable of docker (with a live daemon), podman, buildah. */
  backend?: ContainerBackend;
  /** Image reference; default `<name>:<version>`. */
  imageTag?: string;
  /** Overrides the Dockerfile's BASE_IMAGE build argument. */
  baseImage?: string;
  /**
   * A local root filesystem folder to make the base image from, with no registry (instead of
   * `baseImage`); this machine's Node and npm are added when it has no Node.
   */
  baseRootfs?: string;
  /** Extra arguments for the tool's build command (e.g. `--isolation chroot`). */
  backendArgs?: string[];
  packageStore?: PackageStore;
  /** Search path for the tools (default: $PATH). */
  path?: string;
  /** Where the tool's output goes (default: inherited from this process). */
  stdio?: 'inherit' | 'pipe';
  /** Told what happens, one line at a time: the tool chosen, tools passed over and why, base image steps. */
  report?: (line: string) => void;
}

export interface ContainerizeResult {
  /** The package the image was built from (`name:version`). */
  packageTag: string;
  backend: ContainerBackend;
  imageTag: string;
  /** The base image given or made from `baseRootfs`; undefined: the Dockerfile's default. */
  baseImage?: string;
  command: string[];
}

/** Build an OCI image from a stored package with docker, podman or buildah. */
export async function containerize(options: ContainerizeOptions): Promise<ContainerizeResult> {
  if (options.baseImage !== undefined && options.baseRootfs !== undefined) {
    throw new InvalidArgument('Give either a base image or a base root filesystem, not both');
  }
  const path = options.path ?? process.env.PATH ?? '';
  const report = options.report ?? (() => {});
  const stdio = options.stdio ?? 'inherit';
  const tool = await selectBackend({ backend: options.backend, path, report });
  report(`Using ${tool.backend} (${tool.executable})`);
  const pkg = await (options.packageStore ?? new PackageStore()).get(options.tag);
  const baseImage =
    options.baseRootfs !== undefined
      ? await buildRootfsBase({ tool, rootfs: options.baseRootfs, path, report, stdio })
      : options.baseImage;
  const imageTag = options.imageTag ?? pkg.tag;
  const args = containerBuildArgs(tool.backend, {
    contextDir: pkg.path,
    imageTag,
    baseImage,
    extraArgs: options.backendArgs,
  });
  report(`Building image ${imageTag} from package ${pkg.tag} with ${tool.backend} (its output follows)`);
  await runTool(tool, args, path, stdio).catch((err: unknown) => {
    // Inside another container (CI runners, sandboxes) RUN steps often cannot create a container of
    // their own; chroot isolation needs no runtime, cgroups or network namespace. The tool's own output
    // went to the terminal (it is not in the message), so the hint says what to look for there.
    if (
      tool.backend !== 'docker' &&
      !args.some((arg) => arg.startsWith('--isolation')) &&
      err instanceof Error
    ) {
      err.message += `\nHint: if ${tool.backend} said it cannot create a container (e.g. "cgroups in hybrid mode not supported", inside another container), add --backend-arg=--isolation=chroot`;
    }
    throw err;
  });
  return {
    packageTag: pkg.tag,
    backend: tool.backend,
    imageTag,
    baseImage,
    command: [tool.executable, ...args],
  };
}
