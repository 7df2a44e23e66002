import type { ErrorBody } from '@tiffin/core';
import { Cancelled, type TaskRequest } from '@tiffin/core/tasks';

/** What a task's BullMQ job carries: the stored request and its settings. */
export interface JobData {
  api: string;
  method: string;
  url: string;
  headers: Array<[string, string]>;
  /** Empty: the body is kept apart (`HeldBytes`); in base64 in a job queued before it was. */
  body: string;
  attempts: number;
  client: string | null;
}

/** How a failed job records its end: `failed` or `cancelled`, with the error body. */
export interface Ending {
  status: 'failed' | 'cancelled';
  error: ErrorBody;
}

/**
 * A task's answer as its job keeps it (BullMQ's `returnvalue`): `kept`, its body is kept apart (`HeldBytes`);
 * else (a job that ended before bodies were kept apart) the body is here, in base64.
 */
export interface EncodedAnswer {
  status: number;
  headers: Array<[string, string]>;
  kept?: true;
  body?: string;
}

/** BullMQ keeps failed jobs' reasons as text: an ending is written as JSON behind this mark. */
const ENDING = 'tiffin-ending:';

/** The error `moveToFailed` is given for `ending` (its message becomes the job's `failedReason`). */
export function endingError(ending: Ending): Error {
  return new Error(ENDING + JSON.stringify(ending));
}

/** The ending a job's `failedReason` records, or null when it records none of the store's. */
export function parseEnding(reason: string | undefined): Ending | null {
  if (!reason?.startsWith(ENDING)) return null;
  try {
    return JSON.parse(reason.slice(ENDING.length)) as Ending;
  } catch {
    return null;
  }
}

/**
 * The request a task's job keeps, as it was submitted, with its body as kept apart (`HeldBytes`; in the job's
 * data, base64, for a job queued before bodies were kept apart).
 */
export function storedRequest(data: JobData, body: Buffer | null): TaskRequest {
  return {
    method: data.method,
    url: data.url,
    headers: data.headers,
    body: body ?? Buffer.from(data.body, 'base64'),
  };
}

export function cancelledBody(id: string): ErrorBody {
  return new Cancelled(`task ${id} was cancelled before it started`).toBody();
}

export function cancelledEnding(id: string): Ending {
  return { status: 'cancelled', error: cancelledBody(id) };
}
