import {
  CONTAINER_BACKENDS,
  type ContainerBackend,
  type ContainerizeResult,
  containerize,
  DEFAULT_BASE_IMAGE,
} from '@tiffin/build';
import { type Command, Option } from 'commander';
import { reportError } from '../errors.js';
import { collect } from '../store-output.js';

/** The image options `tiffin containerize` and `tiffin diffusion build --containerize` share. */
export interface ContainerizeFlags {
  backend?: ContainerBackend;
  imageTag?: string;
  baseImage?: string;
  baseRootfs?: string;
  backendArg?: string[];
}

/** Add the image options to a command. */
export function containerizeOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--backend <tool>',
        'container tool (default: the first usable of docker with a running daemon, podman, buildah)',
      ).choices([...CONTAINER_BACKENDS]),
    )
    .option('-t, --image-tag <image>', 'image name:tag (default: the package tag)')
    .addOption(
      new Option(
        '--base-image <image>',
        `base image with Node 20+ and npm (default ${DEFAULT_BASE_IMAGE})`,
      ).conflicts('baseRootfs'),
    )
    .option(
      '--base-rootfs <dir>',
      "build the base image from a local root filesystem instead of pulling one (e.g. from debootstrap); this machine's Node is added when it has none",
    )
    .option(
      '--backend-arg <arg>',
      'extra argument for the build command, e.g. --backend-arg=--isolation=chroot (repeatable)',
      collect,
    );
}

/**
 * Build the image of package `tag`, printing each step as a line on stdout (the container tool's own output,
 * inherited, follows the last one; a spinner would draw over it), then the result and next steps.
 */
export async function containerizePackage(
  tag: string,
  flags: ContainerizeFlags,
): Promise<ContainerizeResult> {
  const result = await containerize({
    tag,
    backend: flags.backend,
    imageTag: flags.imageTag,
    baseImage: flags.baseImage,
    baseRootfs: flags.baseRootfs,
    backendArgs: flags.backendArg,
    report: (line) => process.stdout.write(`${line}\n`),
  });
  const runner = result.backend === 'buildah' ? 'podman' : result.backend;
  const pushed = `<registry>/${result.imageTag.replace(/^localhost\//, '')}`;
  process.stdout.write(
    [
      `Successfully built image ${result.imageTag} with ${result.backend}`,
      '',
      'Next steps:',
      `  * Run it:    ${runner} run --rm -p 3000:3000 ${result.imageTag}`,
      `  * Deploy it: push it to your registry, then: npx tiffin kubernetes ${result.packageTag} --image ${pushed} | kubectl apply -f -`,
      '',
    ].join('\n'),
  );
  return result;
}

/** `tiffin containerize <tag>`: build an OCI image from a package. */
export function registerContainerize(program: Command): void {
  containerizeOptions(
    program
      .command('containerize')
      .description('Build an OCI image from a package (non-root, port 3000, /readyz health check)')
      .argument('<tag>', 'package tag, e.g. my_service:latest'),
  ).action(async (tag: string, flags: ContainerizeFlags) => {
    try {
      await containerizePackage(tag, flags);
    } catch (err) {
      reportError(err);
    }
  });
}
