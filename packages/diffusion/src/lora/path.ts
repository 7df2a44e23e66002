import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { InvalidArgument, NotFound } from '@tiffin/core';
import { truncateForMessage } from '@tiffin/core/internal';

/**
 * Resolves a request's `lora_weights` string (docs/spec/diffusion.md §9.4): an existing absolute path, else a path
 * relative to `loraDir`. `user/repo/file` Hub references cannot be fetched offline and get a clear
 * error instead.
 */
export function resolveLoraPath(value: string, loraDir: string = process.cwd()): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new InvalidArgument('lora_weights must be a non-empty string');
  const candidates = isAbsolute(value) ? [value] : [join(loraDir, value)];
  for (const c of candidates) if (existsSync(c) && statSync(c).isFile()) return resolve(c);
  if (!isAbsolute(value) && /^[\w.-]+\/[\w.-]+\/.+/.test(value)) {
    throw new InvalidArgument(
      `lora_weights ${JSON.stringify(truncateForMessage(value))} is not a file under the LoRA directory, and Hugging Face Hub downloads are not available`,
    );
  }
  // The folder is the server's business: the message names only what the client sent.
  throw new NotFound(
    `LoRA weights not found: ${JSON.stringify(truncateForMessage(value))} (not a file under the LoRA directory)`,
  );
}
