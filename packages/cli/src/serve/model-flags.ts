import type { ModelServiceOptions } from '@tiffin/core';
import type { LoadFrameworkModelOptions } from '@tiffin/core/internal';
import { type Command, InvalidArgumentError } from 'commander';
import { parseNonNegativeInt, parsePositiveInt } from '../options.js';

/** The zero-code flags of `tiffin serve <model>` and `tiffin build <model>`. */
export interface ModelFlags {
  maxBatchSize?: number;
  maxLatencyMs?: number;
  batching: boolean;
  instances?: number;
  threads?: number;
  executionProviders?: string[];
  outputs?: string[];
  concurrency?: number;
  queue?: number;
  cacheTtl?: number;
}

/** commander parser for `cuda,cpu`. */
export function parseProviderList(value: string): string[] {
  const names = value.split(',').map((s) => s.trim().toLowerCase());
  if (names.some((n) => n === ''))
    throw new InvalidArgumentError('expected provider names separated by commas, e.g. cuda,cpu');
  return names;
}

export function loadOptions(flags: ModelFlags): LoadFrameworkModelOptions {
  return {
    instances: flags.instances,
    threads: flags.threads,
    executionProviders: flags.executionProviders,
    // A request's tensors are used once: they move to the runner thread instead of being copied.
    transferInputs: true,
  };
}

/** commander parser for `a,b`: output names, as the model spells them. */
export function parseOutputList(value: string): string[] {
  const names = value.split(',').map((s) => s.trim());
  if (names.some((n) => n === ''))
    throw new InvalidArgumentError('expected output names separated by commas, e.g. scores,boxes');
  return names;
}

export function serviceOptions(flags: ModelFlags): ModelServiceOptions {
  return {
    batching: flags.batching
      ? { max_batch_size: flags.maxBatchSize, max_latency_ms: flags.maxLatencyMs }
      : false,
    ...(flags.outputs ? { outputs: flags.outputs } : {}),
    ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
    ...(flags.queue === undefined ? {} : { queue: flags.queue }),
    ...(flags.cacheTtl === undefined ? {} : { cache: { ttl: flags.cacheTtl } }),
  };
}

/** The model flags of `tiffin serve` and `tiffin build` (both take a model in place of a service). */
export function modelOptions(command: Command): Command {
  return command
    .option(
      '--max-batch-size <n>',
      'model: most rows in one batch (batchable signatures; default 32)',
      parsePositiveInt,
    )
    .option(
      '--max-latency-ms <ms>',
      'model: most milliseconds a request waits for its batch (default 100)',
      parsePositiveInt,
    )
    .option('--no-batching', 'model: run each request alone even when the signature is batchable')
    .option(
      '--instances <n>',
      'model: runner instances (worker threads); default one per core, at most 4; 0 runs a tiny model on the event loop',
      parseNonNegativeInt,
    )
    .option(
      '--threads <n>',
      'model: intra-op threads per instance (default: cores / instances)',
      parsePositiveInt,
    )
    .option(
      '--execution-providers <list>',
      'model: runtime back ends in preference order, e.g. cuda,cpu',
      parseProviderList,
    )
    .option(
      '--outputs <list>',
      "model: serve only these outputs, in this order, e.g. scores,boxes (default: all of the model's)",
      parseOutputList,
    )
    .option(
      '--concurrency <n>',
      "model: calls that run at once, with a queue of the model's own (default: the server's --max-concurrency)",
      parsePositiveInt,
    )
    .option(
      '--queue <n>',
      'model: calls that wait for one of --concurrency, most urgent (Priority: u=0..7) first; past it 503 (default 0)',
      parseNonNegativeInt,
    )
    .option(
      '--cache-ttl <seconds>',
      'model: keep answers this long and send them again for the same input (Tiffin-Cache: hit; where: --cache; 0: until evicted); a batched model needs --no-batching',
      parseNonNegativeInt,
    );
}
