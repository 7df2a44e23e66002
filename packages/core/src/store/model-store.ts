import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, normalize, resolve, sep } from 'node:path';
import { InvalidArgument, NotFound } from '../errors/index.js';
import { EntryStore, ensureStorable, type StoreEntry } from './entry-store.js';
import { contentVersion, copyDir, listFiles, totalSize } from './files.js';
import { modelsDir } from './home.js';
import { type BaseManifest, MANIFEST_FILE, readBaseFields, readManifest, writeManifest } from './manifest.js';

/** The manifest of a saved model (`models/<name>/<version>/manifest.yaml`). */
export interface ModelManifest extends BaseManifest {
  /** Which library saved it and knows how to load it (e.g. `@tiffin/diffusion`, or `custom`). */
  module: string;
  /** Free-form data for the loader (shapes, options, training info). */
  metadata: Record<string, unknown>;
}

/** A saved model; its files are under `filesPath`. */
export interface StoredModel extends StoreEntry<ModelManifest> {
  readonly filesPath: string;
}

export interface SaveModelOptions {
  name: string;
  /** Copy this folder's contents (recursively). */
  dir?: string;
  /** Copy these files (each lands under its base name). */
  paths?: string[];
  /** Write these in-memory files (relative path → content). */
  files?: Record<string, string | Uint8Array>;
  module?: string;
  labels?: Record<string, string>;
  metadata?: Record<string, unknown>;
  /** Fixed version; default: a hash of the files, module, labels and metadata. */
  version?: string;
}

const FILES = 'files';

/** Models on disk. `new ModelStore()` follows `$TIFFIN_MODELS_DIR` / `$TIFFIN_HOME/models` at each call. */
export class ModelStore extends EntryStore<ModelManifest> {
  protected readonly kind = 'model';

  constructor(root?: string) {
    super(() => root ?? modelsDir());
  }

  /** Save a model atomically and return it. Saving identical content again returns the existing entry. */
  async save(options: SaveModelOptions): Promise<StoredModel> {
    ensureStorable(options.name, options.version);
    if (options.dir === undefined && options.paths === undefined && options.files === undefined) {
      throw new InvalidArgument(
        'Nothing to save: give a folder (dir), file paths (paths) or in-memory files (files)',
      );
    }
    const staging = await this.stage();
    try {
      const content = join(staging, FILES);
      await mkdir(content, { recursive: true });
      if (options.dir !== undefined) {
        const from = resolve(options.dir);
        if (!(await stat(from).catch(() => null))?.isDirectory())
          throw new NotFound(`Model folder ${from} not found`);
        await copyDir(from, content);
      }
      for (const path of options.paths ?? []) {
        const from = resolve(path);
        if (!(await stat(from).catch(() => null))?.isFile())
          throw new NotFound(`Model file ${from} not found`);
        await copyDir(from, join(content, basename(from)));
      }
      for (const [rel, data] of Object.entries(options.files ?? {})) {
        const target = normalize(join(content, rel));
        if (!target.startsWith(content + sep))
          throw new InvalidArgument(`Model file path '${rel}' leaves the model folder`);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, data);
      }
      const files = await listFiles(content);
      const module = options.module ?? 'custom';
      const labels = options.labels ?? {};
      const metadata = options.metadata ?? {};
      const version = options.version ?? contentVersion(files, { module, labels, metadata });
      const manifest: ModelManifest = {
        name: options.name,
        version,
        tag: `${options.name}:${version}`,
        module,
        size: totalSize(files),
        creationTime: new Date().toISOString(),
        labels,
        metadata,
        files,
      };
      await writeManifest(join(staging, MANIFEST_FILE), manifest);
      return withFilesPath(await this.commit(staging, manifest));
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
  }

  override async get(tagText: string): Promise<StoredModel> {
    return withFilesPath(await super.get(tagText));
  }

  override async adopt(source: string, unpack: (staging: string) => Promise<void>): Promise<StoredModel> {
    return withFilesPath(await super.adopt(source, unpack));
  }

  protected override contentFolder(): string {
    return FILES;
  }

  protected readManifestFile(path: string): Promise<ModelManifest> {
    return readManifest(path, (fields) => ({
      ...readBaseFields(fields, path),
      module: fields.string('module'),
      metadata: fields.record('metadata'),
    }));
  }
}

function withFilesPath(entry: StoreEntry<ModelManifest>): StoredModel {
  return { ...entry, filesPath: join(entry.path, FILES) };
}
