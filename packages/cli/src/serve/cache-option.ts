import type { ServeOptions } from '@tiffin/core';
import { type Command, InvalidArgumentError, Option } from 'commander';

/**
 * `--cache memory|redis://…`: where the answers of APIs declared with `cache` are kept (docs/cache.md): this
 * process's memory (default) or a Redis every replica shares.
 */
export const cacheOption = (command: Command): Command =>
  command.addOption(
    new Option(
      '--cache <store>',
      'where APIs declared with cache keep their answers: memory (default, 64 MiB) or redis://host:port/db (shared by replicas)',
    )
      .env('TIFFIN_CACHE_URL')
      .argParser((value: string) => {
        if (value === 'memory' || /^rediss?:\/\/[^\s]+$/.test(value)) return value;
        throw new InvalidArgumentError('expected memory or a redis://host:port/db URL');
      }),
  );

/** The `cache` server option `--cache` names (undefined: the default, in memory). */
export async function responseCacheFrom(store: string | undefined): Promise<ServeOptions['cache']> {
  if (store === undefined || store === 'memory') return undefined;
  const { RedisResponseCache } = await import('@tiffin/tasks-redis');
  return RedisResponseCache.open(store);
}
