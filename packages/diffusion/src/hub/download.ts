import { createWriteStream } from 'node:fs';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { downloadFile, listFiles } from '@huggingface/hub';
import { assertNoSymlinkEscape, containedPath } from '@tiffin/core/internal';
import { hubModelDefaults, MODEL_DEFAULTS_FILE } from '../pipeline/model-defaults.js';
import { type RepoFile, selectPipelineFiles } from './select-files.js';

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

export interface DownloadProgress {
  file: string;
  fileBytes: number;
  fileTotal: number;
  bytes: number;
  total: number;
}

export interface HubDownloadOptions {
  /** `owner/name` on the hub. */
  modelId: string;
  /** Branch, tag or commit (default `main`). */
  revision?: string;
  /** Folder the diffusers layout is written to. Partial files end in `.part` and are resumed. */
  destination: string;
  /** Hub base URL; default `$HF_ENDPOINT`, else https://huggingface.co. */
  endpoint?: string;
  /** Access token; default `$HF_TOKEN` (or `$HUGGING_FACE_HUB_TOKEN`). */
  token?: string;
  onProgress?: (progress: DownloadProgress) => void;
  fetch?: typeof fetch;
  /** Which of the listed files to fetch (default: a Stable Diffusion pipeline's, `selectPipelineFiles`). */
  select?: (listed: readonly RepoFile[]) => RepoFile[];
}

export interface HubDownloadResult {
  files: RepoFile[];
  bytes: number;
}

/** The hub could not be reached: the message says what to do instead. */
export class HubUnreachableError extends Error {}

/**
 * Download the files a Stable Diffusion pipeline needs from a Hugging Face hub (or any server speaking
 * its API, e.g. a mirror named by HF_ENDPOINT). Resumes interrupted files with HTTP range requests.
 */
export async function downloadPipeline(options: HubDownloadOptions): Promise<HubDownloadResult> {
  const hubUrl = (options.endpoint ?? process.env.HF_ENDPOINT ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
  const accessToken = options.token ?? process.env.HF_TOKEN ?? process.env.HUGGING_FACE_HUB_TOKEN;
  const common = {
    repo: { type: 'model' as const, name: options.modelId },
    revision: options.revision ?? 'main',
    hubUrl,
    ...(accessToken ? { accessToken } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };

  const listed: RepoFile[] = [];
  await reachable(hubUrl, options.modelId, async () => {
    for await (const entry of listFiles({ ...common, recursive: true })) {
      if (entry.type === 'file') listed.push({ path: entry.path, size: entry.size });
    }
  });
  const files = (options.select ?? selectPipelineFiles)(listed);
  const total = files.reduce((n, f) => n + f.size, 0);
  let done = 0;

  const destination = resolve(options.destination);
  await mkdir(destination, { recursive: true });
  for (const file of files) {
    // The file list is the hub's (or a mirror's): every name must land inside the destination.
    const target = containedPath(destination, file.path, `${options.modelId}: hub file`);
    await assertNoSymlinkEscape(destination, target, `${options.modelId}: hub file '${file.path}'`);
    await mkdir(dirname(target), { recursive: true });
    const existing = await sizeOf(target);
    if (existing === file.size) {
      done += file.size;
      options.onProgress?.({
        file: file.path,
        fileBytes: file.size,
        fileTotal: file.size,
        bytes: done,
        total,
      });
      continue;
    }
    const partial = `${target}.part`;
    let offset = await sizeOf(partial);
    if (offset !== undefined && offset > file.size) offset = undefined; // stale: start again
    const blob = await reachable(hubUrl, options.modelId, () =>
      downloadFile({ ...common, path: file.path, xet: false }),
    );
    if (!blob) throw new Error(`${options.modelId}: ${file.path} disappeared from the hub while downloading`);
    const start = offset ?? 0;
    done += start;
    let fileBytes = start;
    const source = Readable.fromWeb(blob.slice(start).stream() as unknown as NodeReadableStream<Uint8Array>);
    source.on('data', (chunk: Buffer) => {
      fileBytes += chunk.length;
      done += chunk.length;
      options.onProgress?.({ file: file.path, fileBytes, fileTotal: file.size, bytes: done, total });
    });
    await pipeline(source, createWriteStream(partial, { flags: start > 0 ? 'a' : 'w' }));
    const written = await sizeOf(partial);
    if (written !== file.size) {
      throw new Error(
        `${file.path}: downloaded ${written} bytes, expected ${file.size}; run the command again to resume`,
      );
    }
    await rename(partial, target);
  }
  // A Turbo model's repository says nothing of its one step without guidance: its folder does, for the service.
  const known = hubModelDefaults(options.modelId);
  const defaultsPath = join(destination, MODEL_DEFAULTS_FILE);
  if (known && (await sizeOf(defaultsPath)) === undefined)
    await writeFile(defaultsPath, `${JSON.stringify(known, null, 2)}\n`);
  return { files, bytes: total };
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** Turn network failures into one actionable message. */
async function reachable<T>(hubUrl: string, modelId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (err instanceof TypeError && /fetch failed/i.test(err.message)) {
      throw new HubUnreachableError(
        `Cannot reach the model hub at ${hubUrl} (${cause?.code ?? 'network error'}) to download '${modelId}'. ` +
          'Set HF_ENDPOINT to a reachable mirror, or copy the diffusers folder to this machine and pass it as --model-id <folder>.',
      );
    }
    throw err;
  }
}
