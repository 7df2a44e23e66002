import { TiffinError } from '../errors/index.js';

/** A store entry whose manifest is missing, unreadable or malformed. The message names the file and the fix. */
export class CorruptedStoreEntry extends TiffinError {}

/** An entry with the same tag but different content already exists. */
export class StoreConflict extends TiffinError {
  static override readonly httpStatus: number = 409;
}
