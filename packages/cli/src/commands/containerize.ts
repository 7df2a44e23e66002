import { CONTAINER_BACKENDS, type ContainerBackend, containerize } from '@tiffin/core';
import { type Command, Option } from 'commander';
import { reportError } from '../errors.js';
import { collect } from '../store-output.js';

interface ContainerizeFlags {
  backend?: ContainerBackend;
  imageTag?: string;
  baseImage?: string;
  backendArg?: string[];
}

/** `tiffin containerize <tag>`: build an OCI image from a package. */
export function registerContainerize(program: Command): void {
  program
    .command('containerize')
    .description('Build an OCI image from a package (non-root, port 3000, /readyz health check)')
    .argument('<tag>', 'package tag, e.g. my_service:latest')
    .addOption(
      new Option(
        '--backend <tool>',
        'container tool (default: the first found of docker, podman, buildah)',
      ).choices([...CONTAINER_BACKENDS]),
    )
    .option('-t, --image-tag <image>', 'image name:tag (default: the package tag)')
    .option('--base-image <image>', 'base image with Node 20+ (default node:20-bookworm-slim)')
    .option(
      '--backend-arg <arg>',
      'extra argument for the build command, e.g. --backend-arg=--isolation=chroot (repeatable)',
      collect,
    )
    .action(async (tag: string, flags: ContainerizeFlags) => {
      try {
        const result = await containerize({
          tag,
          backend: flags.backend,
          imageTag: flags.imageTag,
          baseImage: flags.baseImage,
          backendArgs: flags.backendArg,
        });
        process.stdout.write(
          [
            `Successfully built image ${result.imageTag} with ${result.backend}`,
            '',
            'Next steps:',
            `  * Run it: ${result.backend === 'buildah' ? 'podman' : result.backend} run --rm -p 3000:3000 ${result.imageTag}`,
            '  * Push it to a registry, then deploy it with the kubernetes.yaml in the package folder',
            '',
          ].join('\n'),
        );
      } catch (err) {
        reportError(err);
      }
    });
}
