import type { Redis } from 'ioredis';
import type { StoreCommands } from './store-commands.js';

/**
 * The bytes a queue's tasks hold in Redis, bounded over every replica (`maxHeldBytes`), as the memory and disk
 * stores bound theirs: each task counts its request's body while it is unfinished, then its answer while it is
 * kept, and `TASK_OVERHEAD_BYTES` besides. The count lives in Redis (a hash of each task's bytes, their sum, and
 * the times the finished ones expire), changed by the same scripts that write or drop the bytes, so replicas
 * share it and a count is never out of step with what was written. The bytes themselves are kept raw, outside
 * BullMQ's job (whose data and return value are JSON, and whose return value BullMQ copies into its events
 * stream): a body in `body:<id>`, dropped when its task ends; an answer in `answer:<id>`, expiring with it. The
 * scripts that change the count share `commands/includes/held-bytes.lua`: the submit's admission
 * (`admit-10.lua`), an answer's keeping (`keep-5.lua`), a task's end (`ended-10.lua`) and the give-back of a task
 * that ended without it (`give-back-4.lua`).
 */

/** Bytes counted for a task beyond its request and answer (its view, its job), as the memory store counts them. */
export const TASK_OVERHEAD_BYTES = 1024;

/**
 * The largest answer written in its job (BullMQ's return value, copied into the events stream) rather than kept
 * apart, when its task's body was at least as large (`TaskSettlement`).
 */
export const INLINE_ANSWER_BYTES = 256;

/** The default bound, the memory and disk stores' own. */
export const DEFAULT_MAX_HELD_BYTES = 512 * 1024 * 1024;

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
    private readonly scripts: StoreCommands,
    name: string,
    private readonly events: string,
    ttlMs: number,
    readonly max: number,
  ) {
    // A key's time to live is at least 1 ms.
    this.ttlMs = Math.max(1, ttlMs);
    this.prefix = `tiffin:${name}`;
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

  /** `admit-10.lua`'s KEYS 7-10 for task `id`. */
  admitKeys(id: string): string[] {
    return [...this.countKeys, this.bodyKey(id)];
  }

  /** `admit-10.lua`'s ARGV 5-9 for task `id` with `body`. */
  admitArgs(id: string, body: Buffer): Array<string | number | Buffer> {
    return [id, body, Date.now(), this.max, TASK_OVERHEAD_BYTES];
  }

  /** `ended-10.lua`'s KEYS 4-9 for task `id` (`endedHeld`'s keys). */
  endKeys(id: string): string[] {
    return [...this.countKeys, this.bodyKey(id), this.answerKey(id), this.events];
  }

  /**
   * `ended-10.lua`'s ARGV 9-14 for task `id` (`endedHeld`'s arguments): `answer` is null for a task that did not
   * succeed, `kept` for an answer kept apart (already counted), or the bytes of one written in the job.
   */
  endArgs(id: string, answer: number | 'kept' | null): Array<string | number> {
    const succeeded = answer === null ? '0' : answer === 'kept' ? '1' : '2';
    const inline = typeof answer === 'number' ? answer : 0;
    return [id, succeeded, Date.now(), this.ttlMs, TASK_OVERHEAD_BYTES, inline];
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
