import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildPackage, type KubernetesOptions, type ServiceModuleLoader } from '@tiffin/build';
import { ModelStore, serve } from '@tiffin/core';
import { CLIException } from '@tiffin/core/internal';
import { demoModelDir } from '@tiffin/demo-model';
import {
  assertBackendPackages,
  BACKEND_NAMES,
  type BackendName,
  backendPackageNames,
  createDiffusionService,
  DEFAULT_MODEL_ID,
  DEFAULT_SDXL_MODEL_ID,
  type DiffusionPipelineKind,
  type OnnxWeights,
  parseOnnxWeights,
  pipelineFamily,
  type ResolvedModel,
  resolveDiffusionModel,
  resolveTinyAutoencoder,
} from '@tiffin/diffusion';
import { parseOrtProviders, parseOrtThreads } from '@tiffin/onnx';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { downloadProgressBar } from '../download-progress.js';
import { reportError } from '../errors.js';
import { type KubernetesFlags, kubernetesOptions, kubernetesOptionsFrom } from '../kubernetes-options.js';
import { parsePort, parsePositiveInt, parseSeconds } from '../options.js';
import { type StepProgress, stepProgress } from '../step-progress.js';
import { type ContainerizeFlags, containerizeOptions, containerizePackage } from './containerize.js';

/** `demo` is Stable Diffusion too: the small model trained by the project, shipped in @tiffin/demo-model. */
const DEMO = 'demo';
const SDXL = 'stable-diffusion-xl';
const SUPPORTED_PIPELINES = ['stable-diffusion', SDXL, DEMO];

interface ModelFlags {
  /** Absent: the pipeline's default model (SD 2 for stable-diffusion, SDXL base for stable-diffusion-xl). */
  modelId?: string;
  revision: string;
}

/** What the service does at run time: request bounds, queue, jobs, engine threads (`start` runs with them, `build` records them). */
interface ServiceSettingFlags {
  maxQueue: number;
  /** Absent: twice the model's own size. */
  maxSize?: number;
  maxSteps: number;
  maxImages: number;
  maxPromptLength: number;
  maxJobs: number;
  jobTtl: number;
  timeout: number;
  progressAll?: boolean;
  /** False with --no-openai-api. */
  openaiApi?: boolean;
  /** False with --no-a1111-api. */
  a1111Api?: boolean;
  /** false with --no-ui */
  ui?: boolean;
  ortThreads?: number;
  ortProviders?: string[];
  weights?: OnnxWeights;
}

interface StartFlags extends ModelFlags, ServiceSettingFlags {
  loraWeights?: string;
  vaeTiny?: string;
  loraDir?: string;
  pipeline?: DiffusionPipelineKind[];
  port: number;
  host: string;
  backend?: BackendName;
  apiToken?: string;
  metricsAuth?: boolean;
}

/** A diffusion model needs far more than a small service: memory for the weights, minutes to load them. */
const DIFFUSION_KUBERNETES_DEFAULTS: KubernetesOptions = {
  cpuRequest: '2',
  memoryRequest: '6Gi',
  cpuLimit: '4',
  memoryLimit: '8Gi',
  startupSeconds: 900,
};

interface BuildFlags extends ModelFlags, ContainerizeFlags, KubernetesFlags, ServiceSettingFlags {
  /** `--backend` names the container build tool here (containerize's option), so the engine is `--engine`. */
  engine?: BackendName;
  pipeline?: DiffusionPipelineKind[];
  loraDir?: string;
  loraWeights?: string;
  vaeTiny?: string;
  name?: string;
  version?: string;
  containerize?: boolean;
  lockfile: boolean;
}

function checkPipelineName(name: string): void {
  if (!SUPPORTED_PIPELINES.includes(name)) {
    throw new CLIException(`Unknown diffusion pipeline '${name}': use ${SUPPORTED_PIPELINES.join(' or ')}`);
  }
}

/** `--pipeline text2img,img2img,inpaint` (any of them, comma-separated; `text2image` is `text2img`). */
function parsePipelineKinds(value: string): DiffusionPipelineKind[] {
  const kinds = value
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  if (kinds.length === 0) throw new InvalidArgumentError('expected text2img, img2img and/or inpaint');
  return kinds.map((k) => {
    if (k === 'text2image' || k === 'text2img') return 'text2img';
    if (k === 'img2img' || k === 'inpaint') return k;
    throw new InvalidArgumentError(`${JSON.stringify(k)} is not text2img, img2img or inpaint`);
  });
}

/** commander's error for a bad value, from the diffusion package's own check (one validation step). */
function flagParser<T>(parse: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return parse(value);
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

function parseMultipleOf8(value: string): number {
  const n = parsePositiveInt(value);
  if (n % 8 !== 0) throw new InvalidArgumentError('expected a multiple of 8');
  return n;
}

/**
 * `demo`: the bundled demo model's folder. Otherwise a local folder as it is; a hub id from the model
 * store, downloaded into it (progress on stderr) when absent.
 */
async function resolveModel(flags: ModelFlags, pipelineName: string): Promise<ResolvedModel> {
  if (pipelineName === DEMO) return { dir: demoModelDir(), downloaded: false };
  const bar = downloadProgressBar();
  try {
    const model = await resolveDiffusionModel({
      modelId: flags.modelId ?? (pipelineName === SDXL ? DEFAULT_SDXL_MODEL_ID : DEFAULT_MODEL_ID),
      revision: flags.revision,
      onProgress: bar.update,
    });
    bar.finish();
    if (model.downloaded) process.stderr.write(`Saved model ${model.tag} to the model store\n`);
    // stable-diffusion serves whatever the folder is; stable-diffusion-xl promises SDXL.
    if (pipelineName === SDXL && pipelineFamily(model.dir) !== 'sdxl')
      throw new CLIException(
        `${flags.modelId} is not an SDXL pipeline (its model_index.json has no text_encoder_2): serve it with stable-diffusion`,
      );
    return model;
  } catch (err) {
    bar.finish();
    throw err;
  }
}

/** `--vae-tiny`: a local AutoencoderTiny folder, or a hub id from the model store (downloaded when absent). */
async function resolveVaeTiny(id: string): Promise<ResolvedModel> {
  const bar = downloadProgressBar();
  try {
    const vae = await resolveTinyAutoencoder({ modelId: id, onProgress: bar.update });
    bar.finish();
    if (vae.downloaded) process.stderr.write(`Saved tiny autoencoder ${vae.tag} to the model store\n`);
    return vae;
  } catch (err) {
    bar.finish();
    throw err;
  }
}

const VAE_TINY_HELP =
  'tiny autoencoder (TAESD, e.g. madebyollin/taesd; a folder or a hub id, downloaded once): decodes images unless a request asks for decoder "full", and draws the previews';

const modelOptions = (command: Command): Command =>
  command
    .option(
      '--model-id <id>',
      `hub model id, a local diffusers folder or a single .safetensors checkpoint (default: ${DEFAULT_MODEL_ID}; ${DEFAULT_SDXL_MODEL_ID} for ${SDXL})`,
    )
    .option('--revision <rev>', 'hub branch, tag or commit', 'main');

const ENGINE_HELP =
  'onnxruntime (threads/providers: --ort-threads, --ort-providers) or a tfjs backend (webgpu only when named, and needs webgpu@0.6.2 and @tensorflow/tfjs-backend-webgpu@4.22.0 installed)';

/** The run-time settings of the service: the same options on `start` and `build`. */
const serviceSettingOptions = (command: Command): Command =>
  command
    .option('--max-queue <n>', 'requests waiting behind the running one before 503', parsePositiveInt, 4)
    .option(
      '--max-size <px>',
      "largest height/width accepted (multiple of 8; default twice the model's size)",
      parseMultipleOf8,
    )
    .option('--max-steps <n>', 'most num_inference_steps accepted', parsePositiveInt, 150)
    .option('--max-images <n>', 'most images per request (num_images_per_prompt)', parsePositiveInt, 4)
    .option(
      '--max-prompt-length <chars>',
      'longest prompt, negative_prompt, prompt_2 or negative_prompt_2 accepted, in characters',
      parsePositiveInt,
      10_000,
    )
    .option(
      '--max-jobs <n>',
      'jobs (/text2img/submit) held at once, finished ones included',
      parsePositiveInt,
      64,
    )
    .option('--job-ttl <seconds>', 'how long a finished job and its images are kept', parsePositiveInt, 600)
    .option(
      '--progress-all',
      'let POST /progress without a request_id stream every generation (ids and previews) to any client',
    )
    .option('--no-ui', 'do not serve the generation page at /ui')
    .option('--no-openai-api', 'do not serve the OpenAI Images API (/v1/images/*, /v1/models)')
    .option('--no-a1111-api', "do not serve AUTOMATIC1111's API (/sdapi/v1/*)")
    .option(
      '--timeout <seconds>',
      'per-request timeout (504; the generation is cancelled)',
      parseSeconds,
      600,
    )
    .option(
      '--ort-threads <n>',
      'onnxruntime intra-op threads (default $TIFFIN_ORT_THREADS, else every core)',
      flagParser(parseOrtThreads),
    )
    .option(
      '--ort-providers <list>',
      'onnxruntime execution providers in preference order, e.g. cuda,cpu (default $TIFFIN_ORT_PROVIDERS, else cpu; cpu is always the fallback, a provider that is not installed is skipped with a log line)',
      flagParser(parseOrtProviders),
    )
    .option(
      '--weights <format>',
      'how onnxruntime stores the weights of the graphs it builds: f32 (default), f16 (half the disk, same speed) or int8 (UNet and text encoder linear/conv weights quantized per channel: faster CPU steps, a quarter of their memory, slightly different images); GPU providers keep f16/f32',
      flagParser((v) => parseOnnxWeights(v)),
    );

/** The `createDiffusionService` options the setting flags give (one check for both commands). */
function serviceSettings(flags: ServiceSettingFlags, backend: BackendName | undefined, backendFlag: string) {
  const onnxFlag =
    flags.ortThreads !== undefined
      ? '--ort-threads'
      : flags.ortProviders
        ? '--ort-providers'
        : flags.weights
          ? '--weights'
          : null;
  if (onnxFlag && backend && backend !== 'onnxruntime')
    throw new CLIException(`${onnxFlag} applies to ${backendFlag} onnxruntime, not ${backend}`);
  return {
    limits: {
      maxSize: flags.maxSize,
      maxSteps: flags.maxSteps,
      maxImages: flags.maxImages,
      maxPromptLength: flags.maxPromptLength,
    },
    maxQueue: flags.maxQueue,
    maxJobs: flags.maxJobs,
    jobResultTtl: flags.jobTtl,
    timeout: flags.timeout,
    progressAll: flags.progressAll === true,
    page: flags.ui !== false,
    openaiApi: flags.openaiApi !== false,
    a1111Api: flags.a1111Api !== false,
    backend,
    onnx: {
      intraOpThreads: flags.ortThreads,
      executionProviders: flags.ortProviders,
      weights: flags.weights,
    },
  };
}

/** `tiffin diffusion start|download|build`: serve Stable Diffusion without writing a service. */
export function registerDiffusion(program: Command): void {
  const diffusion = program
    .command('diffusion')
    .description('Serve, download and package Stable Diffusion models');

  serviceSettingOptions(
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
      'folder of LoRA files requests may name in lora_weights (also $TIFFIN_LORA_DIR)',
    )
    .option('--vae-tiny <folder|id>', VAE_TINY_HELP)
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
    .addOption(
      new Option('--backend <name>', `engine: ${ENGINE_HELP}; default: the first that loads`).choices([
        ...BACKEND_NAMES,
      ]),
    )
    .action(async (name: string, flags: StartFlags) => {
      try {
        checkPipelineName(name);
        // Before resolving (maybe downloading) the model: a missing optional backend package fails now.
        assertBackendPackages(flags.backend);
        const settings = serviceSettings(flags, flags.backend, '--backend');
        if (flags.loraWeights && !existsSync(flags.loraWeights))
          throw new CLIException(`--lora-weights ${flags.loraWeights} not found`);
        const model = await resolveModel(flags, name);
        const vaeTiny = flags.vaeTiny ? await resolveVaeTiny(flags.vaeTiny) : undefined;
        const { service } = createDiffusionService({
          modelDir: model.dir,
          pipeline: flags.pipeline,
          vaeTiny: vaeTiny?.dir,
          loraWeights: flags.loraWeights,
          loraDir: flags.loraDir,
          ...settings,
          models: model.tag ? [model.tag] : [],
        });
        await serve(service, {
          port: flags.port,
          host: flags.host,
          handleSignals: true,
          apiToken: flags.apiToken,
          metricsAuth: flags.metricsAuth,
        });
      } catch (err) {
        reportError(err);
      }
    });

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
          'Package the model, LoRA files and the diffusion service into a deployable package, with the service settings given here',
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
    .option('--name <name>', 'package name (default stable-diffusion)')
    .option('--version <version>', 'package version (default: a hash of its content)')
    .option('--no-lockfile', 'skip package-lock.json (it is generated with npm from the npm registry)')
    .option('--containerize', 'then build a container image from the package (image options below)');
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

/** The folder of this CLI package: generated service files live below it so `@tiffin/*` imports resolve. */
function cliPackageDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (dir !== dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === '@tiffin/cli'
    )
      return dir;
    dir = dirname(dir);
  }
  throw new CLIException('Cannot find the @tiffin/cli package folder');
}

const importModule: ServiceModuleLoader = async (file) =>
  (await import(pathToFileURL(file).href)) as Record<string, unknown>;

/**
 * Models and LoRA files go into the model store (so @tiffin/build's buildPackage copies them into the package); a small
 * generated service module creates the diffusion service from those store entries when the package runs.
 */
async function buildDiffusionPackage(flags: BuildFlags, pipelineName: string, progress: StepProgress) {
  const settings = serviceSettings(flags, flags.engine, '--engine');
  // A TF.js engine's packages are optional peers: they must be installed here to be recorded in the package.
  assertBackendPackages(flags.engine);
  const store = new ModelStore();
  const packageName = (flags.name ?? 'stable-diffusion').toLowerCase();
  let model = await resolveModel(flags, pipelineName);
  if (!model.tag) {
    progress.step(`Saving the model folder ${basename(model.dir)} to the model store`);
    const saved = await store.save({
      name: `${packageName}-model`,
      dir: model.dir,
      module: 'tiffin.diffusion',
      labels: { source: basename(model.dir) },
    });
    model = { ...model, tag: saved.tag };
  }
  let loraTag: string | undefined;
  if (flags.loraDir || flags.loraWeights) {
    progress.step('Saving the LoRA files to the model store');
    const saved = await store.save({
      name: `${packageName}-lora`,
      ...(flags.loraDir ? { dir: resolve(flags.loraDir) } : {}),
      ...(flags.loraWeights ? { paths: [resolve(flags.loraWeights)] } : {}),
      module: 'tiffin.diffusion.lora',
    });
    loraTag = saved.tag;
  }
  // A hub id is already a store entry; a local folder is saved as one, so the package carries it like the model.
  let vaeTinyTag: string | undefined;
  if (flags.vaeTiny) {
    const vae = await resolveVaeTiny(flags.vaeTiny);
    if (vae.tag) vaeTinyTag = vae.tag;
    else {
      progress.step(`Saving the tiny autoencoder ${basename(vae.dir)} to the model store`);
      const saved = await store.save({
        name: `${packageName}-vae-tiny`,
        dir: vae.dir,
        module: 'tiffin.diffusion.vae-tiny',
        labels: { source: basename(vae.dir) },
      });
      vaeTinyTag = saved.tag;
    }
  }
  const source = serviceModuleSource({
    name: packageName,
    modelTag: model.tag as string,
    loraTag,
    loraWeights: flags.loraWeights ? basename(flags.loraWeights) : undefined,
    vaeTinyTag,
    pipeline: flags.pipeline,
    settings,
  });
  const workDir = join(cliPackageDir(), '.diffusion-build', `${process.pid}-${Date.now()}`);
  await mkdir(workDir, { recursive: true });
  const file = join(workDir, 'service.mjs');
  try {
    await writeFile(file, source);
    return await buildPackage({
      service: file,
      name: packageName,
      version: flags.version,
      lockfile: flags.lockfile,
      loadModule: importModule,
      kubernetes: kubernetesOptionsFrom(flags, DIFFUSION_KUBERNETES_DEFAULTS),
      kserve: flags.kserve,
      onStep: (step) => progress.step(step),
      // The service imports the engine's packages only at run time: record them so the package runs where deployed.
      runtimePackages: flags.engine ? backendPackageNames(flags.engine) : [],
      // The generated module is temporary: record its name, not the build machine's path to it.
      cwd: workDir,
    });
  } finally {
    await rm(workDir, { recursive: true, force: true });
    // Leave no empty folder behind (another build running at the same time keeps it).
    await rmdir(dirname(workDir)).catch(() => {});
  }
}

function serviceModuleSource(o: {
  name: string;
  modelTag: string;
  loraTag?: string;
  loraWeights?: string;
  vaeTinyTag?: string;
  pipeline?: DiffusionPipelineKind[];
  settings: ReturnType<typeof serviceSettings>;
}): string {
  const j = JSON.stringify;
  return `// Generated by \`tiffin diffusion build\`: the diffusion service over models from the package's store.
import { join } from 'node:path';
import { ModelStore } from '@tiffin/core';
import { createDiffusionService } from '@tiffin/diffusion';

const store = new ModelStore();
const model = await store.get(${j(o.modelTag)});
const loras = ${o.loraTag ? `await store.get(${j(o.loraTag)})` : 'undefined'};
const loraWeights = ${j(o.loraWeights ?? null)};
const vaeTiny = ${o.vaeTinyTag ? `await store.get(${j(o.vaeTinyTag)})` : 'undefined'};

export default createDiffusionService({
  name: ${j(o.name)},
  modelDir: model.filesPath,
  pipeline: ${j(o.pipeline ?? null)} ?? undefined,
  loraDir: loras?.filesPath,
  loraWeights: loras && loraWeights ? join(loras.filesPath, loraWeights) : undefined,
  vaeTiny: vaeTiny?.filesPath,
  models: ${j([o.modelTag, ...(o.loraTag ? [o.loraTag] : []), ...(o.vaeTinyTag ? [o.vaeTinyTag] : [])])},
  // The settings given to \`tiffin diffusion build\`; an engine or ORT setting left out there is read from
  // $TIFFIN_TF_BACKEND / $TIFFIN_ORT_* where the package runs.
  ...${j(o.settings)},
}).service;
`;
}
