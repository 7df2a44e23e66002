import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ApiOptions, IODescriptor } from '@tiffin/core';

/** The response cache of the generation APIs (`DiffusionServiceOptions.cache`). */
export interface GenerationCacheOptions {
  /** Seconds an answer is kept (default 300; 0: until evicted). */
  ttl?: number;
  /** Answers over this many bytes are not kept (default 8 MiB: four PNGs of 512×512). */
  maxBytes?: number;
}

type ApiCache = NonNullable<ApiOptions<IODescriptor, IODescriptor>['cache']>;

/** Default most bytes of one kept answer: a multipart answer of four 512×512 PNGs fits. */
export const GENERATION_CACHE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * The generation APIs' `cache` (docs/cache.md, docs/diffusion-service.md): a seeded request only (an unseeded one
 * draws a random seed, so its answer differs each time), keyed by every decoded parameter with the seed, the
 * `Accept` header (the format follows it when the body names none) and `version`, what the pixels depend on
 * besides the request (`generationVersion`); undefined when `given` is off.
 */
export function generationCache(
  given: boolean | GenerationCacheOptions | undefined,
  version: string,
): ApiCache | undefined {
  if (!given) return undefined;
  const options = given === true ? {} : given;
  return {
    ...(options.ttl === undefined ? {} : { ttl: options.ttl }),
    maxBytes: options.maxBytes ?? GENERATION_CACHE_MAX_BYTES,
    vary: ['accept'],
    version,
    when: seeded,
  };
}

/** Whether a decoded request names its seed: the JSON body (text2img) or its `data` part (img2img, inpaint). */
export function seeded(input: unknown): boolean {
  if (typeof input !== 'object' || input === null) return false;
  const data = (input as { data?: unknown }).data;
  const body = (typeof data === 'object' && data !== null ? data : input) as { seed?: unknown };
  return typeof body.seed === 'number';
}

/**
 * What a generation's pixels depend on besides its request: the start model's files (names, sizes and times of
 * the files in its folder and their subfolders, or the checkpoint file's), the LoRA merged at start and the tiny
 * decoder the same way, and the engine. Replicas started alike share keys; a model changed on disk is new keys.
 */
export function generationVersion(parts: {
  modelDir: string;
  loraWeights?: string | undefined;
  vaeTiny?: string | undefined;
  engine: string;
}): string {
  const hash = createHash('sha256');
  hash.update(`engine ${parts.engine}\n`);
  for (const path of [parts.modelDir, parts.loraWeights, parts.vaeTiny])
    if (path !== undefined) fingerprint(hash, path, basename(path), 2);
  return hash.digest('hex').slice(0, 32);
}

/** Names are relative to the part's own folder: replicas that mount the model elsewhere share keys. */
function fingerprint(hash: ReturnType<typeof createHash>, path: string, name: string, depth: number): void {
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(path);
  } catch {
    hash.update(`missing ${name}\n`);
    return;
  }
  if (!info.isDirectory()) {
    hash.update(`${name} ${info.size} ${info.mtimeMs}\n`);
    return;
  }
  if (depth === 0) return;
  for (const entry of readdirSync(path).sort())
    fingerprint(hash, join(path, entry), `${name}/${entry}`, depth - 1);
}
