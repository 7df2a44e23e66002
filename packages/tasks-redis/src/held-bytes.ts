import type { Redis } from 'ioredis';

/**
 * The bytes a queue's tasks hold in Redis, bounded over every replica (`maxHeldBytes`), as the memory and disk
 * stores bound theirs: each task counts its request's body while it is unfinished, then its answer while it is
 * kept, and `TASK_OVERHEAD_BYTES` besides. The count lives in Redis (a hash of each task's bytes, their sum, and
 * the times the finished ones expire), changed by the same scripts that write or drop the bytes, so replicas
 * share it and a count is never out of step with what was written. The bytes themselves are kept raw, outside
 * BullMQ's job (whose data and return value are JSON, and whose return value BullMQ copies into its events
 * stream): a body in `body:<id>`, dropped when its task ends; an answer in `answer:<id>`, expiring with it.
 */

/** Bytes counted for a task beyond its request and answer (its view, its job), as the memory store counts them. */
export const TASK_OVERHEAD_BYTES = 1024;

/** The default bound, the memory and disk stores' own. */
export const DEFAULT_MAX_HELD_BYTES = 512 * 1024 * 1024;

/** Finished tasks' counts dropped per call at most, as their answers expire (a call's work stays bounded). */
const PURGE_LIMIT = 1000;

/**
 * Lua functions the scripts share. `purge`: the counts of finished tasks whose time has passed (ZSET `expiry`
 * scored by when, up to `now`) leave the hash `held` and the sum `total`. `count`: a task's bytes become
 * `bytes` (0: it is no longer counted), expiring at `expires` when given.
 */
export const HELD_LUA = `
local function purge(held, total, expiry, now)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, ${PURGE_LIMIT})
  for _, id in ipairs(gone) do
    redis.call('DECRBY', total, tonumber(redis.call('HGET', held, id) or '0'))
    redis.call('HDEL', held, id)
  end
  if #gone > 0 then redis.call('ZREM', expiry, unpack(gone)) end
end
local function count(held, total, expiry, id, bytes, expires)
  redis.call('INCRBY', total, bytes - tonumber(redis.call('HGET', held, id) or '0'))
  if bytes == 0 then
    redis.call('HDEL', held, id)
    redis.call('ZREM', expiry, id)
    return
  end
  redis.call('HSET', held, id, bytes)
  if expires then redis.call('ZADD', expiry, string.format('%d', expires), id) end
end
local function heldNow(total)
  return tonumber(redis.call('GET', total) or '0')
end
`;

/**
 * A submit's admission in one round trip: the unfinished jobs in BullMQ's lists (KEYS 1-5: wait, paused,
 * active, delayed, prioritized, as `Queue.getJobCounts` counts them) under ARGV[1], then the client's count
 * (KEYS[6], field ARGV[3] when ARGV[2] is `1`) taken under its share ARGV[4], then the body (ARGV[6]) and the
 * overhead (ARGV[9]) under the bound ARGV[8] on the bytes held (KEYS 7-9, purged as of ARGV[7]); the body is
 * kept at KEYS[10] for task ARGV[5]. 0: admitted, 1: full, 2: the client's share is used, 3: the bytes are.
 */
export const ADMIT_SCRIPT = `${HELD_LUA}
local unfinished = redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + redis.call('LLEN', KEYS[3])
  + redis.call('ZCARD', KEYS[4]) + redis.call('ZCARD', KEYS[5])
if unfinished >= tonumber(ARGV[1]) then return 1 end
if ARGV[2] == '1' then
  if redis.call('HINCRBY', KEYS[6], ARGV[3], 1) > tonumber(ARGV[4]) then
    redis.call('HINCRBY', KEYS[6], ARGV[3], -1)
    return 2
  end
end
purge(KEYS[7], KEYS[8], KEYS[9], ARGV[7])
local size = string.len(ARGV[6]) + tonumber(ARGV[9])
if heldNow(KEYS[8]) + size > tonumber(ARGV[8]) then
  if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[6], ARGV[3], -1) end
  return 3
end
redis.call('SET', KEYS[10], ARGV[6])
count(KEYS[7], KEYS[8], KEYS[9], ARGV[5], size, nil)
return 0
`;

/**
 * A task's answer kept before its job is marked completed (a reader that sees it completed finds the answer):
 * when the answer ARGV[2] and the overhead ARGV[6] fit under the bound ARGV[5] in place of what task ARGV[1]
 * counted (its body), it is written at KEYS[4] for ARGV[4] ms, counted until then (as of ARGV[3]), and the
 * body (KEYS[5]) expires then too (it is dropped as the task's end is written; should that never come, it
 * still goes). 1: kept, 0: it does not fit.
 */
const KEEP_SCRIPT = `${HELD_LUA}
purge(KEYS[1], KEYS[2], KEYS[3], ARGV[3])
local size = string.len(ARGV[2]) + tonumber(ARGV[6])
local own = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if heldNow(KEYS[2]) - own + size > tonumber(ARGV[5]) then return 0 end
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[5], ARGV[4])
count(KEYS[1], KEYS[2], KEYS[3], ARGV[1], size, tonumber(ARGV[3]) + tonumber(ARGV[4]))
return 1
`;

/**
 * A task's bytes given back: its body (KEYS[4]) dropped and its count (task ARGV[1]) set to ARGV[2] bytes,
 * expiring at ARGV[3] (empty: none), for a task that ended without the end script (cancelled while queued)
 * or was never queued.
 */
const GIVE_BACK_SCRIPT = `${HELD_LUA}
redis.call('DEL', KEYS[4])
count(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]))
return 0
`;

/**
 * What the end script of a task (`ENDED_SCRIPT`) adds, run with `HELD_LUA`: KEYS[K] to KEYS[K+5] are
 * `HeldBytes.endKeys(id)`, ARGV[A] to ARGV[A+3] `HeldBytes.endArgs(id, succeeded)`. The body goes; a task that
 * did not succeed keeps only its overhead counted (an answer it kept on an earlier attempt goes), for its time
 * to live; BullMQ's events stream loses its entries older than that time.
 */
export function endedLua(k: number, a: number): string {
  return `
redis.call('DEL', KEYS[${k + 3}])
if ARGV[${a + 1}] ~= '1' then
  redis.call('DEL', KEYS[${k + 4}])
  count(KEYS[${k}], KEYS[${k + 1}], KEYS[${k + 2}], ARGV[${a}], ${TASK_OVERHEAD_BYTES}, tonumber(ARGV[${a + 2}]) + tonumber(ARGV[${a + 3}]))
end
redis.call('XTRIM', KEYS[${k + 5}], 'MINID', string.format('%d', tonumber(ARGV[${a + 2}]) - tonumber(ARGV[${a + 3}])))
`;
}

/** The scripts defined on the store's commands connection. */
interface HeldScripts {
  tiffinKeep(...args: Array<string | number | Buffer>): Promise<number>;
  tiffinGiveBack(...args: Array<string | number>): Promise<number>;
}

/** One queue's held bytes: its keys, and the scripts that change them outside a submit and a task's end. */
export class HeldBytes {
  private readonly prefix: string;
  private readonly ttlMs: number;

  /**
   * `name`: the queue's; `events`: BullMQ's events stream key; `ttlMs`: how long an answer is kept; `max`: the
   * bound (`maxHeldBytes`).
   */
  constructor(
    private readonly commands: Redis,
    name: string,
    private readonly events: string,
    ttlMs: number,
    readonly max: number,
  ) {
    // A key's time to live is at least 1 ms.
    this.ttlMs = Math.max(1, ttlMs);
    this.prefix = `tiffin:${name}`;
    commands.defineCommand('tiffinKeep', { numberOfKeys: 5, lua: KEEP_SCRIPT });
    commands.defineCommand('tiffinGiveBack', { numberOfKeys: 4, lua: GIVE_BACK_SCRIPT });
  }

  private get scripts(): HeldScripts {
    return this.commands as unknown as HeldScripts;
  }

  /** The count's keys (the hash of each task's bytes, their sum, the finished ones' expiry times). */
  get countKeys(): [string, string, string] {
    return [`${this.prefix}:held`, `${this.prefix}:held:total`, `${this.prefix}:held:expiry`];
  }

  bodyKey(id: string): string {
    return `${this.prefix}:body:${id}`;
  }

  answerKey(id: string): string {
    return `${this.prefix}:answer:${id}`;
  }

  /** `ADMIT_SCRIPT`'s KEYS 7-10 for task `id`. */
  admitKeys(id: string): string[] {
    return [...this.countKeys, this.bodyKey(id)];
  }

  /** `ADMIT_SCRIPT`'s ARGV 5-9 for task `id` with `body`. */
  admitArgs(id: string, body: Buffer): Array<string | number | Buffer> {
    return [id, body, Date.now(), this.max, TASK_OVERHEAD_BYTES];
  }

  /** `endedLua`'s keys for task `id`. */
  endKeys(id: string): string[] {
    return [...this.countKeys, this.bodyKey(id), this.answerKey(id), this.events];
  }

  /** `endedLua`'s arguments for task `id`. */
  endArgs(id: string, succeeded: boolean): Array<string | number> {
    return [id, succeeded ? '1' : '0', Date.now(), this.ttlMs];
  }

  /** The stored body of task `id` (null: none kept, as for a task queued before bodies were kept apart). */
  body(id: string): Promise<Buffer | null> {
    return this.commands.getBuffer(this.bodyKey(id));
  }

  /** The kept answer of task `id` (null: none, or it expired). */
  answer(id: string): Promise<Buffer | null> {
    return this.commands.getBuffer(this.answerKey(id));
  }

  /** Keep task `id`'s answer for its time to live; false when it does not fit under the bound. */
  async keep(id: string, answer: Buffer): Promise<boolean> {
    const kept = await this.scripts.tiffinKeep(
      ...this.countKeys,
      this.answerKey(id),
      this.bodyKey(id),
      id,
      answer,
      Date.now(),
      this.ttlMs,
      this.max,
      TASK_OVERHEAD_BYTES,
    );
    return kept === 1;
  }

  /**
   * Give back task `id`'s bytes: its body, and all of its count (`ended` false: it was never queued) or all
   * but its overhead, kept for its time to live (`ended`: it ended while queued).
   */
  async giveBack(id: string, ended: boolean): Promise<void> {
    await this.scripts.tiffinGiveBack(
      ...this.countKeys,
      this.bodyKey(id),
      id,
      ended ? TASK_OVERHEAD_BYTES : 0,
      ended ? Date.now() + this.ttlMs : '',
    );
  }
}
