import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildPackage, type KubernetesOptions, type ServiceModuleLoader } from '@tiffin/build';
import { ModelStore } from '@tiffin/core';
import { CLIException } from '@tiffin/core/internal';
import {
  assertBackendPackages,
  type BackendName,
  backendPackageNames,
  type DiffusionPipelineKind,
} from '@tiffin/diffusion';
import type { ContainerizeFlags } from '../commands/containerize.js';
import { type KubernetesFlags, kubernetesOptionsFrom } from '../kubernetes-options.js';
import type { StepProgress } from '../step-progress.js';
import { resolveControlNets } from './controlnet-flags.js';
import { controlNetsFor, type ModelFlags, resolveModel, resolveVaeTiny } from './model-resolution.js';
import { type ModelsDirFlags, modelsDirSettings } from './models-dir-flags.js';
import { type PackagedControlNet, serviceModuleSource } from './service-module-source.js';
import { type ServiceSettingFlags, serviceSettings } from './setting-flags.js';

/** A diffusion model needs far more than a small service: memory for the weights, minutes to load them. */
export const DIFFUSION_KUBERNETES_DEFAULTS: KubernetesOptions = {
  cpuRequest: '2',
  memoryRequest: '6Gi',
  cpuLimit: '4',
  memoryLimit: '8Gi',
  startupSeconds: 900,
};

export interface BuildFlags
  extends ModelFlags,
    ContainerizeFlags,
    KubernetesFlags,
    ServiceSettingFlags,
    ModelsDirFlags {
  /** `--backend` names the container build tool here (containerize's option), so the engine is `--engine`. */
  engine?: BackendName;
  pipeline?: DiffusionPipelineKind[];
  loraDir?: string;
  loraWeights?: string;
  vaeTiny?: string;
  /** `--controlnet name=<folder|file|hub id>`, repeatable: packaged, and the package starts with them. */
  controlnet?: Array<[string, string]>;
  name?: string;
  version?: string;
  containerize?: boolean;
  lockfile: boolean;
}

/**
 * `--tasks` (the Kubernetes option, checked there) as the package's service starts with it: `disk`, `memory`, a
 * `redis://` URL as given; `redis` and `secret:…` name a URL only the pod's $TIFFIN_TASKS_URL holds ('').
 */
function recordedTasks(tasks: string | undefined): string | undefined {
  if (tasks === undefined || tasks === 'disk' || tasks === 'memory' || /^rediss?:\/\//.test(tasks))
    return tasks;
  return '';
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

/**
 * Each `--controlnet` as a store entry the package carries: a hub id's download is one already; a local folder or
 * single `.safetensors` file is saved as one (a file keeps its name, recorded beside the tag).
 */
async function packagedControlNets(
  store: ModelStore,
  packageName: string,
  pairs: BuildFlags['controlnet'],
  progress: StepProgress,
): Promise<PackagedControlNet[]> {
  const packaged: PackagedControlNet[] = [];
  for (const [name, source] of pairs ?? []) {
    const { controlnets, tags } = await resolveControlNets([[name, source]]);
    const dir = controlnets[name] as string;
    if (tags[0]) {
      packaged.push({ name, tag: tags[0] });
      continue;
    }
    progress.step(`Saving the ControlNet ${name} (${basename(dir)}) to the model store`);
    const file = statSync(dir).isFile();
    const saved = await store.save({
      // A store name: lower case, at most 63 characters, ending in a letter or digit.
      name: `${packageName}-controlnet-${name.toLowerCase()}`.slice(0, 63).replace(/[._-]+$/, ''),
      ...(file ? { paths: [dir] } : { dir }),
      module: 'tiffin.diffusion.controlnet',
      labels: { source: basename(dir), controlnet: name },
    });
    packaged.push({ name, tag: saved.tag, ...(file ? { file: basename(dir) } : {}) });
  }
  return packaged;
}

const importModule: ServiceModuleLoader = async (file) =>
  (await import(pathToFileURL(file).href)) as Record<string, unknown>;

/**
 * Models and LoRA files go into the model store (so @tiffin/build's buildPackage copies them into the package); a small
 * generated service module creates the diffusion service from those store entries when the package runs.
 */
export async function buildDiffusionPackage(flags: BuildFlags, pipelineName: string, progress: StepProgress) {
  const settings = serviceSettings(flags, flags.engine, '--engine');
  const tasks = recordedTasks(flags.tasks);
  const { modelsDir, maxLoadedModels } = modelsDirSettings(flags);
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
  // `demo` carries the demo's Canny ControlNet, so the package serves what `diffusion start demo` does.
  const controlnets = await packagedControlNets(
    store,
    packageName,
    controlNetsFor(pipelineName, flags.controlnet),
    progress,
  );
  // The checkpoints folder is one store entry, so the package carries it as it carries the model.
  let checkpointsTag: string | undefined;
  if (modelsDir) {
    progress.step(`Saving the checkpoints of ${basename(resolve(modelsDir))} to the model store`);
    const saved = await store.save({
      name: `${packageName}-checkpoints`,
      dir: resolve(modelsDir),
      module: 'tiffin.diffusion.checkpoints',
      labels: { source: basename(resolve(modelsDir)) },
    });
    checkpointsTag = saved.tag;
  }
  const source = serviceModuleSource({
    name: packageName,
    modelTag: model.tag as string,
    loraTag,
    loraWeights: flags.loraWeights ? basename(flags.loraWeights) : undefined,
    vaeTinyTag,
    controlnets,
    checkpointsTag,
    maxLoadedModels,
    tasks,
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
