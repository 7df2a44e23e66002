import { buildPackage } from '@tiffin/core/internal';
import type { Command } from 'commander';
import { reportError } from '../errors.js';
import { type KubernetesFlags, kubernetesOptions, kubernetesOptionsFrom } from '../kubernetes-options.js';
import { importServiceModule } from '../service-loader.js';
import { stepProgress } from '../step-progress.js';
import { collectLabel } from '../store-output.js';

interface BuildFlags extends KubernetesFlags {
  name?: string;
  version?: string;
  label?: Record<string, string>;
  lockfile: boolean;
}

/** `tiffin build <service.ts[:export]>`: make a deployable package in $TIFFIN_HOME/packages. */
export function registerBuild(program: Command): void {
  const command = program
    .command('build')
    .description(
      'Build a deployable package (bundled code, dependencies, models, Dockerfile, Kubernetes manifests)',
    )
    .argument('<service>', 'service module, e.g. service.ts or service.ts:myService')
    .option('--name <name>', "package name (default: the service's name)")
    .option('--version <version>', 'package version (default: a hash of its content)')
    .option('--label <key=value>', 'label recorded in the manifest (repeatable)', collectLabel)
    .option('--no-lockfile', 'skip package-lock.json (it is generated with npm from the npm registry)');
  kubernetesOptions(command).action(async (spec: string, flags: BuildFlags) => {
    const progress = stepProgress();
    try {
      const pkg = await buildPackage({
        service: spec,
        name: flags.name,
        version: flags.version,
        labels: flags.label,
        lockfile: flags.lockfile,
        loadModule: importServiceModule,
        kubernetes: kubernetesOptionsFrom(flags),
        kserve: flags.kserve,
        onStep: (step) => progress.step(step),
      });
      progress.done();
      process.stdout.write(
        [
          `Successfully built package ${pkg.tag}`,
          `  at ${pkg.path}`,
          '',
          'Next steps:',
          `  * Serve it locally:          npx tiffin serve ${pkg.tag}`,
          `  * Build a container image:   npx tiffin containerize ${pkg.tag}`,
          `  * Deploy it to Kubernetes:   push that image to a registry, then: npx tiffin kubernetes ${pkg.tag} --image <registry>/${pkg.tag} | kubectl apply -f -`,
          `  * Move it to another machine: npx tiffin export ${pkg.tag}`,
          '',
        ].join('\n'),
      );
    } catch (err) {
      progress.done(true);
      reportError(err);
    }
  });
}
