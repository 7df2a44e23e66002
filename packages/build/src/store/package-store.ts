import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type BaseManifest,
  CorruptedStoreEntry,
  contentVersion,
  type DescriptorSpec,
  EntryStore,
  ensureStorable,
  listFiles,
  MANIFEST_FILE,
  packagesDir,
  readBaseFields,
  readManifest,
  type StoreEntry,
  totalSize,
  writeManifest,
} from '@tiffin/core/internal';

/** One API as recorded in a package manifest. */
export interface PackagedApi {
  name: string;
  route: string;
  doc: string;
  input: DescriptorSpec | null;
  output: DescriptorSpec | null;
}

/** The manifest of a deployable package (`packages/<name>/<version>/manifest.yaml`). */
export interface PackageManifest extends BaseManifest {
  /** The service's name (also the package name). */
  service: string;
  /** The service reference it was built from, `file[:export]`, relative to the build's working folder. */
  source: string;
  /** The bundled module whose default export is the Service, relative to the package folder. */
  entry: string;
  apis: PackagedApi[];
  /** Model tags bundled under `models/`. */
  models: string[];
  /** Runtime npm dependencies (exact versions, or `file:` for vendored @tiffin packages). */
  dependencies: Record<string, string>;
}

export type StoredPackage = StoreEntry<PackageManifest>;

/** What a builder fills in; the store adds name/version/tag/size/files/creation time. */
export type PackageDraft = Omit<
  PackageManifest,
  'name' | 'version' | 'tag' | 'size' | 'creationTime' | 'files'
>;

export interface CreatePackageOptions {
  name: string;
  /** Fixed version; default: a hash of the package's content. */
  version?: string;
  /** Write the package's files into `dir` and describe them. */
  fill(dir: string): Promise<PackageDraft>;
  /** Write files that must mention the final version (package.json, Kubernetes image tag); not part of the hash. */
  finalize?(dir: string, version: string): Promise<void>;
}

/** Deployable packages on disk under `$TIFFIN_HOME/packages`. */
export class PackageStore extends EntryStore<PackageManifest> {
  protected readonly kind = 'package';

  constructor(root?: string) {
    super(() => root ?? packagesDir());
  }

  /** Assemble a package in a staging folder and add it atomically. */
  async create(options: CreatePackageOptions): Promise<StoredPackage> {
    ensureStorable(options.name, options.version);
    const staging = await this.stage();
    try {
      const draft = await options.fill(staging);
      const version = options.version ?? contentVersion(await listFiles(staging), { ...draft });
      await options.finalize?.(staging, version);
      const files = await listFiles(staging);
      const manifest: PackageManifest = {
        name: options.name,
        version,
        tag: `${options.name}:${version}`,
        size: totalSize(files),
        creationTime: new Date().toISOString(),
        files,
        ...draft,
      };
      await writeManifest(join(staging, MANIFEST_FILE), manifest);
      return await this.commit(staging, manifest);
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  protected readManifestFile(path: string): Promise<PackageManifest> {
    return readManifest(path, (fields) => {
      const apis = fields.array('apis').map((item) => {
        const api = item as Partial<PackagedApi> | null;
        if (!api || typeof api.name !== 'string' || typeof api.route !== 'string') {
          throw new CorruptedStoreEntry(
            `Manifest ${path} is invalid: every entry of 'apis' needs name and route; delete the entry and build it again`,
          );
        }
        return {
          name: api.name,
          route: api.route,
          doc: api.doc ?? '',
          input: api.input ?? null,
          output: api.output ?? null,
        };
      });
      const models = fields.array('models');
      if (!models.every((m) => typeof m === 'string')) {
        throw new CorruptedStoreEntry(
          `Manifest ${path} is invalid: 'models' must be a list of tags; delete the entry and build it again`,
        );
      }
      return {
        ...readBaseFields(fields, path),
        service: fields.string('service'),
        source: fields.string('source'),
        entry: fields.string('entry'),
        apis,
        models: models as string[],
        dependencies: fields.stringRecord('dependencies'),
      };
    });
  }
}
