import { existsSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InvalidArgument, ModelStore, NotFound, type StoredModel } from '@tiffin/core';
import { tiffinHome } from '@tiffin/core/internal';
import { singleFileToDiffusers } from '../checkpoints/single-file.js';
import { type DownloadProgress, downloadPipeline } from './download.js';
import { type RepoFile, selectControlNetFiles, selectTinyAutoencoderFiles } from './select-files.js';

/** The module recorded in the manifest of models this package downloads. */
export const DIFFUSION_MODEL_MODULE = 'tiffin.diffusion';
export const DEFAULT_MODEL_ID = 'stabilityai/stable-diffusion-2';
/** What `stable-diffusion-xl` serves when no model is named. */
export const DEFAULT_SDXL_MODEL_ID = 'stabilityai/stable-diffusion-xl-base-1.0';

export interface ResolveModelOptions {
  /** Hub id (`owner/name`) or a local diffusers folder. */
  modelId: string;
  /** Branch, tag or commit (default `main`). */
  revision?: string;
  store?: ModelStore;
  endpoint?: string;
  token?: string;
  onProgress?: (progress: DownloadProgress) => void;
}

export interface ResolvedModel {
  /** Folder holding the diffusers layout. */
  dir: string;
  /** Model store tag; absent for a local folder served directly. */
  tag?: string;
  /** True when this call downloaded it. */
  downloaded: boolean;
}

const HUB_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

/** Store tag of a hub model: `owner--name:revision`, lower-case, as the store's names allow. */
export function storeTagFor(modelId: string, revision = 'main'): { name: string; version: string } {
  const name = modelId
    .toLowerCase()
    .replace('/', '--')
    .replace(/[^a-z0-9._-]/g, '-')
    .slice(0, 63)
    .replace(/[^a-z0-9]+$/, '');
  const version = revision.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 128);
  return { name, version };
}

/**
 * A local folder is used as it is. A hub id is looked up in the model store (`owner--name:revision`) and,
 * when absent, downloaded (resumably, into `$TIFFIN_HOME/downloads/`) and saved there with module
 * `tiffin.diffusion`.
 */
export async function resolveDiffusionModel(options: ResolveModelOptions): Promise<ResolvedModel> {
  const local = resolve(options.modelId);
  if (existsSync(local)) {
    // A single-file LDM checkpoint (.safetensors) is converted once; pickles are refused with why.
    if (statSync(local).isFile()) return { dir: singleFileToDiffusers(local), downloaded: false };
    if (!statSync(local).isDirectory() || !existsSync(join(local, 'model_index.json'))) {
      throw new InvalidArgument(`${local} is not a diffusers pipeline folder (no model_index.json)`);
    }
    return { dir: local, downloaded: false };
  }
  return fromStoreOrHub(options, '--model-id', 'stabilityai/stable-diffusion-2');
}

/**
 * A tiny autoencoder (`--vae-tiny`, diffusers `AutoencoderTiny` layout such as `madebyollin/taesd`): a local folder
 * with its `config.json` as it is, a hub id from the model store or downloaded into it (its config and weights only).
 */
export async function resolveTinyAutoencoder(options: ResolveModelOptions): Promise<ResolvedModel> {
  const local = resolve(options.modelId);
  if (existsSync(local)) {
    if (!statSync(local).isDirectory() || !existsSync(join(local, 'config.json')))
      throw new InvalidArgument(`${local} is not a tiny autoencoder folder (no config.json)`);
    return { dir: local, downloaded: false };
  }
  return fromStoreOrHub(options, '--vae-tiny', 'madebyollin/taesd', selectTinyAutoencoderFiles);
}

/**
 * A ControlNet (`--controlnet name=<folder|file|id>`): a local diffusers `ControlNetModel` folder (its
 * `config.json` beside the weights) or single-file `.safetensors` as it is, else a hub id from the model store or
 * downloaded into it (its config and weights only, as a tiny autoencoder's).
 */
export async function resolveControlNet(options: ResolveModelOptions): Promise<ResolvedModel> {
  const local = resolve(options.modelId);
  if (existsSync(local)) {
    const file = statSync(local).isFile();
    if (file ? !local.endsWith('.safetensors') : !existsSync(join(local, 'config.json')))
      throw new InvalidArgument(
        `${local} is not a ControlNet (a diffusers ControlNetModel folder with config.json, or a .safetensors file)`,
      );
    return { dir: local, downloaded: false };
  }
  return fromStoreOrHub(options, '--controlnet', 'lllyasviel/sd-controlnet-canny', selectControlNetFiles);
}

/** A hub id's store entry (`owner--name:revision`), downloaded with `select`'s files first when absent. */
async function fromStoreOrHub(
  options: ResolveModelOptions,
  flag: string,
  example: string,
  select?: (listed: readonly RepoFile[]) => RepoFile[],
): Promise<ResolvedModel> {
  if (!HUB_ID.test(options.modelId)) {
    throw new InvalidArgument(
      `${flag} '${options.modelId}' is neither an existing folder nor a hub id like ${example}`,
    );
  }
  const revision = options.revision ?? 'main';
  const store = options.store ?? new ModelStore();
  const { name, version } = storeTagFor(options.modelId, revision);
  try {
    const model = await store.get(`${name}:${version}`);
    return { dir: model.filesPath, tag: model.tag, downloaded: false };
  } catch (err) {
    if (!(err instanceof NotFound)) throw err;
  }
  const model = await downloadIntoStore(options, store, name, version, revision, select);
  return { dir: model.filesPath, tag: model.tag, downloaded: true };
}

async function downloadIntoStore(
  options: ResolveModelOptions,
  store: ModelStore,
  name: string,
  version: string,
  revision: string,
  select?: (listed: readonly RepoFile[]) => RepoFile[],
): Promise<StoredModel> {
  // A fixed folder per model and revision, so an interrupted download resumes where it stopped.
  const destination = join(tiffinHome(), 'downloads', `${name}@${version}`);
  await downloadPipeline({
    modelId: options.modelId,
    revision,
    destination,
    endpoint: options.endpoint,
    token: options.token,
    onProgress: options.onProgress,
    select,
  });
  const model = await store.save({
    name,
    version,
    dir: destination,
    module: DIFFUSION_MODEL_MODULE,
    labels: { model_id: options.modelId, revision },
    metadata: {
      modelId: options.modelId,
      revision,
      pipeline: select === selectTinyAutoencoderFiles ? 'vae-tiny' : 'stable-diffusion',
    },
  });
  await rm(destination, { recursive: true, force: true });
  return model;
}
