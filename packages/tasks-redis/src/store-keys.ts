/**
 * The store's own keys beside BullMQ's, for queue `name` (`tiffin:<name>:events…`): its channel, the unfinished
 * tasks of each client, the cancel marks, the endings of tasks cancelled while queued and each API's recent run
 * times. The held bytes' keys are `HeldBytes`'; BullMQ's are named in `bullmq-assumptions.ts`.
 */
export class StoreKeys {
  /** The channel events, cancels and `queued` messages travel on, between every process of the queue. */
  readonly channel: string;
  /** A hash: each client's unfinished tasks. */
  readonly clients: string;
  /** A set: the tasks a cancel marked, read by the next claim (a queued task) and by the runner's process. */
  readonly cancelled: string;
  /** The prefix of each API's recent run times (a list), followed by the API's name (`view-5.lua`). */
  readonly runsPrefix: string;

  constructor(name: string) {
    this.channel = `tiffin:${name}:events`;
    this.clients = `tiffin:${name}:clients`;
    this.cancelled = `${this.channel}:cancelled`;
    this.runsPrefix = `${this.channel}:runs:`;
  }

  /** A hash: the ending of task `id`, cancelled while queued (its job removed). */
  ended(id: string): string {
    return `${this.channel}:ended:${id}`;
  }

  /** A list: the recent run times of `api`, for its queued tasks' estimate. */
  runs(api: string): string {
    return `${this.runsPrefix}${api}`;
  }
}
