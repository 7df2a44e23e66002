import type { LoadFrameworkModelOptions, ModelServiceOptions } from '@tiffin/core';
import { InvalidArgumentError } from 'commander';

/** The zero-code flags of `tiffin serve <model>` and `tiffin build <model>`. */
export interface ModelFlags {
  maxBatchSize?: number;
  maxLatencyMs?: number;
  batching: boolean;
  instances?: number;
  threads?: number;
  executionProviders?: string[];
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

export function serviceOptions(flags: ModelFlags): ModelServiceOptions {
  return {
    batching: flags.batching
      ? { max_batch_size: flags.maxBatchSize, max_latency_ms: flags.maxLatencyMs }
      : false,
  };
}
