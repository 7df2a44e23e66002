import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { type DescriptorSpec, type IODescriptor, ModelStore } from '@tiffin/core/internal';
import { bundleService } from './bundle.js';
import { resolveDependencies, run } from './dependencies.js';
import {
  inferenceServiceManifest,
  type KubernetesOptions,
  kubernetesManifests,
  kubernetesYaml,
  resolveKubernetesOptions,
} from './kubernetes.js';
import { makeReadableByAll } from './readable-tree.js';
import { dockerfileSource, packageJsonSource, serverEntrySource } from './runtime-files.js';
import {
  loadServiceReference,
  parseServiceReference,
  type ServiceModuleLoader,
} from './service-reference.js';
import { type PackagedApi, PackageStore, type StoredPackage } from './store/package-store.js';

export const PACKAGE_ENTRY = 'service.js';

export interface BuildPackageOptions {
  /** `path/to/service.ts[:exportName]`. */
  service: string;
  /** Package name; default: the Service's name. */
  name?: string;
  /** Package version; default: a hash of the package's content. */
  version?: string;
  labels?: Record<string, string>;
  /** Write package-lock.json with `npm install --package-lock-only` (needs the npm registry). Default true. */
  lockfile?: boolean;
  /** How to import the service file (the CLI passes one that handles TypeScript under plain Node). */
  loadModule?: ServiceModuleLoader;
  packageStore?: PackageStore;
  modelStore?: ModelStore;
  /** Folder `source` is recorded relative to (default: the current working folder). */
  cwd?: string;
  /** Image, replicas and resources of the Kubernetes manifests (`kubernetes.yaml`). */
  kubernetes?: KubernetesOptions;
  /** Also write `inferenceservice.yaml`, a KServe InferenceService running the same image. */
  kserve?: boolean;
  /** Told each step as it starts (the CLI shows them: a build takes seconds to minutes). */
  onStep?: (step: string) => void;
  /**
   * Packages the service loads at run time without importing them in its code (an engine's optional peers, such as
   * TF.js for `tiffin diffusion build --engine wasm`): recorded as dependencies, at the versions installed here.
   */
  runtimePackages?: readonly string[];
}

/**
 * Banner that points the model store at the package's own models when the bundle runs. An empty
 * TIFFIN_MODELS_DIR counts as unset, as in modelsDir().
 */
const MODELS_BANNER = `import { fileURLToPath as __tiffinFileURLToPath } from 'node:url';
process.env.TIFFIN_MODELS_DIR ||= __tiffinFileURLToPath(new URL('./models/', import.meta.url));`;

/**
 * Build a deployable package: bundled service code, package.json (+ lockfile) with exact dependency
 * versions and vendored @tiffin packages, the declared models, a manifest, a Dockerfile and Kubernetes
 * manifests. The package appears in the store only once complete.
 */
export async function buildPackage(options: BuildPackageOptions): Promise<StoredPackage> {
  resolveKubernetesOptions(options.kubernetes); // a bad manifest option fails before the build's work
  const ref = parseServiceReference(options.service);
  const step = options.onStep ?? (() => {});
  step(`Loading the service from ${relative(options.cwd ?? process.cwd(), ref.file) || ref.file}`);
  const { service, exportName } = await loadServiceReference(ref, options.loadModule);
  const name = (options.name ?? service.name).toLowerCase();
  const kubernetes: KubernetesOptions = {
    ...options.kubernetes,
    taskApis: [...service.apis.values()].some((api) => api.task),
  };
  resolveKubernetesOptions(kubernetes); // replicas above 1 with task APIs need tasks on Redis
  const models = options.modelStore ?? new ModelStore();
  const packages = options.packageStore ?? new PackageStore();
  const cwd = options.cwd ?? process.cwd();
  let dependencies: Record<string, string> = {};

  return packages.create({
    name,
    version: options.version,
    fill: async (dir) => {
      const resolvedModels: string[] = [];
      for (const tag of service.models) {
        step(`Copying model ${tag}`);
        const model = await models.get(tag);
        await mkdir(dirname(join(dir, 'models', model.manifest.name, model.manifest.version)), {
          recursive: true,
        });
        await cp(model.path, join(dir, 'models', model.manifest.name, model.manifest.version), {
          recursive: true,
        });
        resolvedModels.push(model.tag);
      }
      step('Bundling the service code (esbuild)');
      const bundle = await bundleService({
        file: ref.file,
        exportName,
        outfile: join(dir, PACKAGE_ENTRY),
        banner: resolvedModels.length > 0 ? MODELS_BANNER : undefined,
      });
      step('Resolving dependencies');
      dependencies = await resolveDependencies(
        [...new Set([...bundle.externalPackages, '@tiffin/core', ...(options.runtimePackages ?? [])])],
        dirname(ref.file),
        dir,
      );
      await writeFile(join(dir, 'server.mjs'), serverEntrySource(PACKAGE_ENTRY));
      const sourcePath = relative(cwd, ref.file) || ref.file;
      return {
        service: service.name,
        source: exportName === 'default' ? sourcePath : `${sourcePath}:${exportName}`,
        entry: PACKAGE_ENTRY,
        apis: [...service.apis.values()].map(
          (api): PackagedApi => ({
            name: api.name,
            route: api.route,
            doc: api.doc,
            input: specOf(api.input),
            output: specOf(api.output),
          }),
        ),
        models: resolvedModels,
        dependencies,
        labels: options.labels ?? {},
      };
    },
    finalize: async (dir, version) => {
      const tag = `${name}:${version}`;
      step('Writing package.json, Dockerfile and Kubernetes manifests');
      await writeFile(join(dir, 'package.json'), packageJsonSource(name, version, dependencies));
      await writeFile(join(dir, 'Dockerfile'), dockerfileSource(tag));
      const header = `Generated by tiffin build for ${tag}`;
      await writeFile(
        join(dir, 'kubernetes.yaml'),
        kubernetesYaml(kubernetesManifests(name, version, kubernetes), header),
      );
      if (options.kserve) {
        await writeFile(
          join(dir, 'inferenceservice.yaml'),
          kubernetesYaml([inferenceServiceManifest(name, version, kubernetes)], header),
        );
      }
      if (options.lockfile !== false) {
        step('Writing package-lock.json (npm install --package-lock-only)');
        await run(
          'npm',
          [
            'install',
            '--package-lock-only',
            '--ignore-scripts',
            '--no-audit',
            '--no-fund',
            '--loglevel=error',
          ],
          dir,
        );
      }
      // The image runs the package as a non-root user (CONTAINER_USER): it must be able to read all of it.
      await makeReadableByAll(dir);
    },
  });
}

function specOf(descriptor: IODescriptor): DescriptorSpec | null {
  try {
    return descriptor.toSpec();
  } catch {
    return null; // user descriptors without a spec still package; they just cannot be re-created from the manifest
  }
}
