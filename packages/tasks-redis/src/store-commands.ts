import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/**
 * The store's Lua scripts, one file each under `commands/` named `<name>-<number of keys>.lua` as BullMQ names its
 * own, with shared functions in `commands/includes/` pulled in by a `--- @include "includes/<file>"` line. They are
 * read from the package at run time (`src/commands` beside this module, `dist/commands` beside the bundle, copied
 * there by `tsup.config.ts`), once a process, and defined once on a store's commands connection: ioredis sends
 * each as `EVALSHA` and loads it again should Redis have lost it.
 */
const COMMANDS = new URL('./commands/', import.meta.url);

/** Every script, by file name without `.lua`; `tiffin` and its name in camel case is its method (`StoreCommands`). */
const SCRIPTS = ['admit-10', 'keep-5', 'give-back-4', 'start-4', 'view-5', 'ended-10', 'stats-2'] as const;

const INCLUDE = /^--- @include "([a-z/-]+)"$/gm;

/** What `view-5.lua` replies: no job (its ending, if cancelled while queued), finished, running, or waiting. */
export type ViewReply =
  | [0, string | null]
  | [1, ViewFields]
  | [2, ViewFields]
  | [3, ViewFields, position: number, runs: string[]];

/** The job's fields `view-5.lua` read (`VIEW_FIELDS`): its answer, or whether it has one (1 or 0), last. */
export type ViewFields = [
  name: string,
  timestamp: string | null,
  progress: string | null,
  processedOn: string | null,
  finishedOn: string | null,
  failedReason: string | null,
  answer: string | number | null,
];

/** The scripts as methods of the commands connection, their KEYS then their ARGV. */
export interface StoreCommands {
  tiffinAdmit(...args: Array<string | number | Buffer>): Promise<number>;
  tiffinKeep(...args: Array<string | number | Buffer>): Promise<number>;
  tiffinGiveBack(...args: Array<string | number>): Promise<number>;
  /** `start-4.lua`, its reply's body as bytes (ioredis's `Buffer` form of a script's method). */
  tiffinStartBuffer(...args: Array<string | number>): Promise<[left: number, body: Buffer | null]>;
  tiffinView(...args: Array<string | number>): Promise<ViewReply>;
  /** `ended-10.lua`: 0 done, 1 the job has not finished (nothing done), 2 done already. */
  tiffinEnded(...args: Array<string | number>): Promise<0 | 1 | 2>;
  tiffinStats(...args: Array<string | number>): Promise<Array<string | number>>;
}

let loaded: Array<{ method: string; numberOfKeys: number; lua: string }> | undefined;

function read(name: string): string {
  return readFileSync(new URL(`${name}.lua`, COMMANDS), 'utf8');
}

/** The scripts' text with their includes in place, read once. */
function scripts(): NonNullable<typeof loaded> {
  loaded ??= SCRIPTS.map((file) => {
    const at = file.lastIndexOf('-');
    const name = file.slice(0, at).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    return {
      method: `tiffin${name[0]?.toUpperCase()}${name.slice(1)}`,
      numberOfKeys: Number(file.slice(at + 1)),
      lua: read(file).replace(INCLUDE, (_, include: string) => read(include)),
    };
  });
  return loaded;
}

/** Defines every script on `redis` (the store's commands connection, or the Worker's) and answers it as their methods. */
export function defineStoreCommands(redis: Redis): StoreCommands {
  for (const { method, numberOfKeys, lua } of scripts()) redis.defineCommand(method, { numberOfKeys, lua });
  return redis as unknown as StoreCommands;
}
