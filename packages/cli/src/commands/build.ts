import { buildPackage } from '@tiffin/build';
import type { Command } from 'commander';
import { writeModelServiceModule } from '../build/model-service-module.js';
import { reportError } from '../errors.js';
import { type KubernetesFlags, kubernetesOptions, kubernetesOptionsFrom } from '../kubernetes-options.js';
import { type ModelFlags, modelOptions } from '../serve/model-flags.js';
import { resolveModelTarget } from '../serve/model-target.js';
import { importServiceModule } from '../service-loader.js';
import { stepProgress } from '../step-progress.js';
import { collectLabel } from '../store-output.js';

interface BuildFlags extends KubernetesFlags, ModelFlags {
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
    .argument(
      '<service>',
      'service module, e.g. service.ts or service.ts:myService, or a model to serve with zero code: model.onnx, a TF.js model.json folder, or a store tag with its module (onnx:iris:latest)',
    )
    .option('--name <name>', "package name (default: the service's name)")
    .option('--version <version>', 'package version (default: a hash of its content)')
    .option('--label <key=value>', 'label recorded in the manifest (repeatable)', collectLabel)
    .option('--no-lockfile', 'skip package-lock.json (it is generated with npm from the npm registry)');
  modelOptions(command);
  kubernetesOptions(command).action(async (spec: string, flags: BuildFlags) => {
    // A model is built as the zero-code service `tiffin serve <model>` runs, with the model in the package.
    const model = await resolveModelTarget(spec).catch((err: unknown) => {
      reportError(err);
      return undefined;
    });
    if (model === undefined) return;
    const generated = model
      ? await writeModelServiceModule(model, flags, flags.name).catch((err: unknown) => {
          reportError(err);
          return undefined;
        })
      : null;
    if (generated === undefined) return;
    const progress = stepProgress();
    try {
      const pkg = await buildPackage({
        service: generated?.file ?? spec,
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
    } finally {
      await generated?.dispose();
    }
  });
}
