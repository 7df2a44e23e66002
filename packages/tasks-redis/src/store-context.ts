import type { Queue, Worker } from 'bullmq';
import type { HeldBytes } from './held-bytes.js';
import type { StoreCommands } from './store-commands.js';
import type { StoreConnections } from './store-connections.js';
import type { StoreKeys } from './store-keys.js';
import type { StoreSettings } from './store-options.js';

/** What every part of one store shares: its settings, connections and scripts, BullMQ's queue and its keys. */
export interface StoreContext {
  readonly settings: StoreSettings;
  readonly connections: StoreConnections;
  /** The scripts, on the commands connection (`commands/*.lua`). */
  readonly scripts: StoreCommands;
  /**
   * The same scripts on the Worker's connection, where BullMQ completes jobs: one sent there after a completion
   * reaches Redis after it, in the same write.
   */
  readonly workerScripts: StoreCommands;
  readonly queue: Queue;
  /** The Worker the store claims through by hand (`getNextJob`), never run. */
  readonly worker: Worker;
  readonly keys: StoreKeys;
  /** The bytes the queue's tasks hold, counted over every replica. */
  readonly held: HeldBytes;
}
