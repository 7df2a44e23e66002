import { existsSync } from 'node:fs';
import { CLIException } from '@tiffin/core/internal';
import {
  assertBackendPackages,
  BACKEND_NAMES,
  type BackendName,
  createDiffusionService,
  type DiffusionPipelineKind,
} from '@tiffin/diffusion';
import { type Command, Option } from 'commander';
import { API_AUTH_HELP, parseApiAuth } from '../diffusion/api-auth.js';
import { CONTROLNET_HELP, collectControlNet, resolveControlNets } from '../diffusion/controlnet-flags.js';
import {
  type BuildFlags,
  buildDiffusionPackage,
  DIFFUSION_KUBERNETES_DEFAULTS,
} from '../diffusion/diffusion-package.js';
import {
  checkPipelineName,
  controlNetsFor,
  loraDirFor,
  type ModelFlags,
  modelOptions,
  resolveModel,
  resolveVaeTiny,
  VAE_TINY_HELP,
} from '../diffusion/model-resolution.js';
import { type ModelsDirFlags, modelsDirOptions, modelsDirSettings } from '../diffusion/models-dir-flags.js';
import {
  ENGINE_HELP,
  parsePipelineKinds,
  type ServiceSettingFlags,
  serviceSettingOptions,
  serviceSettings,
} from '../diffusion/setting-flags.js';
import { reportError } from '../errors.js';
import { kubernetesOptions } from '../kubernetes-options.js';
import { parsePort } from '../options.js';
import { cacheOption, responseCacheFrom } from '../serve/cache-option.js';
import { serveInProcess } from '../serve/single.js';
import { type TaskOptionFlags, taskOptions, taskStoreFlags, webhookOptions } from '../serve/task-options.js';
import { stepProgress } from '../step-progress.js';
import { containerizeOptions, containerizePackage } from './containerize.js';

interface StartFlags extends ModelFlags, ServiceSettingFlags, TaskOptionFlags, ModelsDirFlags {
  loraWeights?: string;
  vaeTiny?: string;
  controlnet?: Array<[string, string]>;
  loraDir?: string;
  pipeline?: DiffusionPipelineKind[];
  port: number;
  host: string;
  backend?: BackendName;
  apiToken?: string;
  metricsAuth?: boolean;
  apiAuth?: string;
  /** `--cache memory|redis://…`: where the response cache keeps answers. */
  cache?: string;
}

/** `tiffin diffusion start|download|build`: serve Stable Diffusion without writing a service. */
export function registerDiffusion(program: Command): void {
  const diffusion = program
    .command('diffusion')
    .description('Serve, download and package Stable Diffusion models');

  const start = serviceSettingOptions(
    modelOptions(
      diffusion
        .command('start')
        .description(
          'Serve POST /text2img (or /img2img) for a Stable Diffusion model, downloading it first if needed',
        )
        .argument(
          '<pipeline>',
          'stable-diffusion (1.x, 2.x or an SDXL folder), stable-diffusion-xl, or demo for the bundled demo model',
        ),
    ),
  )
    .option('--lora-weights <file>', 'LoRA merged at start; its folder is also a LoRA directory for requests')
    .option(
      '--lora-dir <dir>',
      "folder of LoRA files requests may name in lora_weights (also $TIFFIN_LORA_DIR; for demo, default the demo's own: swap-red-blue)",
    )
    .option('--vae-tiny <folder|id>', VAE_TINY_HELP)
    .option('--controlnet <name=folder|id>', CONTROLNET_HELP, collectControlNet)
    .option(
      '--pipeline <kinds>',
      'generation APIs to serve, comma-separated: text2img, img2img, inpaint (default: all three; inpaint alone for an inpainting model)',
      parsePipelineKinds,
    )
    // $PORT as for `tiffin serve` (containers and process managers set it).
    .addOption(
      new Option('-p, --port <port>', 'port to listen on (0 picks a free one)')
        .env('PORT')
        .argParser(parsePort)
        .default(3000),
    )
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option(
      '--api-token <token>',
      'require `Authorization: Bearer <token>` on API calls, / and /docs.json; default $TIFFIN_API_TOKEN',
    )
    .option('--metrics-auth', 'with a token: require it for /metrics too')
    .addOption(new Option('--api-auth <user:pass,...>', API_AUTH_HELP).env('TIFFIN_A1111_API_AUTH'))
    .addOption(
      new Option('--backend <name>', `engine: ${ENGINE_HELP}; default: the first that loads`).choices([
        ...BACKEND_NAMES,
      ]),
    )
    .action(async (name: string, flags: StartFlags) => {
      try {
        checkPipelineName(name);
        const a1111ApiAuth = flags.apiAuth === undefined ? undefined : parseApiAuth(flags.apiAuth);
        // Before resolving (maybe downloading) the model: a missing optional backend package fails now.
        assertBackendPackages(flags.backend);
        const settings = serviceSettings(flags, flags.backend, '--backend');
        const checkpoints = modelsDirSettings(flags);
        if (flags.loraWeights && !existsSync(flags.loraWeights))
          throw new CLIException(`--lora-weights ${flags.loraWeights} not found`);
        const model = await resolveModel(flags, name);
        const vaeTiny = flags.vaeTiny ? await resolveVaeTiny(flags.vaeTiny) : undefined;
        const { controlnets } = await resolveControlNets(controlNetsFor(name, flags.controlnet));
        const { service } = createDiffusionService({
          modelDir: model.dir,
          pipeline: flags.pipeline,
          vaeTiny: vaeTiny?.dir,
          controlnets,
          loraWeights: flags.loraWeights,
          loraDir: loraDirFor(name, flags.loraDir),
          ...settings,
          ...checkpoints,
          models: model.tag ? [model.tag] : [],
          a1111ApiAuth,
        });
        const options = {
          port: flags.port,
          host: flags.host,
          apiToken: flags.apiToken,
          metricsAuth: flags.metricsAuth,
          webhooks: webhookOptions(flags),
          // Where --cache-ttl keeps answers: memory, or a Redis the replicas share (--cache redis://…).
          cache: await responseCacheFrom(flags.cache),
        };
        // As `tiffin serve` runs a service: its image jobs (/text2img/submit …) in the --tasks store.
        await serveInProcess(async () => service, options, undefined, taskStoreFlags(flags));
      } catch (err) {
        reportError(err);
      }
    });
  taskOptions(start);
  cacheOption(start);
  modelsDirOptions(start);

  modelOptions(
    diffusion
      .command('download')
      .description(
        'Download a model from the hub into the model store without serving it (resumes an interrupted download)',
      )
      .argument(
        '<pipeline>',
        'stable-diffusion (1.x, 2.x or an SDXL folder), stable-diffusion-xl, or demo for the bundled demo model',
      ),
  ).action(async (name: string, flags: ModelFlags) => {
    try {
      checkPipelineName(name);
      const model = await resolveModel(flags, name);
      process.stdout.write(
        model.tag
          ? `${model.downloaded ? 'Downloaded' : 'Already in the store:'} ${model.tag}\n  at ${model.dir}\n`
          : `${model.dir} is a local folder: nothing to download\n`,
      );
    } catch (err) {
      reportError(err);
    }
  });

  const build = serviceSettingOptions(
    modelOptions(
      diffusion
        .command('build')
        .description(
          'Package the model, LoRA files, ControlNets and the diffusion service into a deployable package, with the service settings given here',
        )
        .argument(
          '<pipeline>',
          'stable-diffusion (1.x, 2.x or an SDXL folder), stable-diffusion-xl, or demo for the bundled demo model',
        ),
    ),
  )
    .addOption(
      new Option(
        '--engine <name>',
        `engine the package runs on (start's --backend; here --backend is the image build tool): ${ENGINE_HELP}; default: $TIFFIN_TF_BACKEND where it runs, else the first that loads`,
      ).choices([...BACKEND_NAMES]),
    )
    .option(
      '--pipeline <kinds>',
      'generation APIs to serve, comma-separated: text2img, img2img, inpaint (default: all three; inpaint alone for an inpainting model)',
      parsePipelineKinds,
    )
    .option('--lora-dir <dir>', 'folder of LoRA files packaged for per-request use')
    .option('--lora-weights <file>', 'LoRA packaged and merged at start')
    .option('--vae-tiny <folder|id>', `${VAE_TINY_HELP}; packaged, and the package starts with it`)
    .option(
      '--controlnet <name=folder|id>',
      `${CONTROLNET_HELP}; packaged, and the package starts with them`,
      collectControlNet,
    )
    .option('--name <name>', 'package name (default stable-diffusion)')
    .option('--version <version>', 'package version (default: a hash of its content)')
    .option('--no-lockfile', 'skip package-lock.json (it is generated with npm from the npm registry)')
    .option('--containerize', 'then build a container image from the package (image options below)');
  modelsDirOptions(build);
  kubernetesOptions(containerizeOptions(build), DIFFUSION_KUBERNETES_DEFAULTS).action(
    async (name: string, flags: BuildFlags) => {
      const progress = stepProgress();
      try {
        checkPipelineName(name);
        const pkg = await buildDiffusionPackage(flags, name, progress);
        progress.done();
        const lines = [
          `Successfully built package ${pkg.tag}`,
          `  at ${pkg.path}`,
          '',
          'Next steps:',
          `  * Serve it locally:          npx tiffin serve ${pkg.tag}`,
          `  * Build a container image:   npx tiffin containerize ${pkg.tag}`,
          `  * Move it to another machine: npx tiffin export ${pkg.tag}`,
          '',
        ];
        process.stdout.write(lines.join('\n'));
        if (flags.containerize) await containerizePackage(pkg.tag, flags);
      } catch (err) {
        progress.done(true);
        reportError(err);
      }
    },
  );
}
