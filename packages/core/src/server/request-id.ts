import { randomFillSync } from 'node:crypto';

/** Ids a proxy may pass in `x-request-id`: short, printable, no separators that could forge log fields. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const ID_BYTES = 8;
const POOL_IDS = 512;
const pool = Buffer.allocUnsafe(ID_BYTES * POOL_IDS);
let poolHex = '';
let next = POOL_IDS;

/**
 * A new request id: 64 random bits as 16 hex digits (the reference uses a random 64-bit id too). Drawn from a
 * pool refilled 512 ids at a time: one random fill and one hex encoding per 512 requests (each id is then a
 * slice of that string) instead of a UUID per request.
 */
export function newRequestId(): string {
  return requestIdFor(undefined);
}

/** Reuse a well-formed incoming request id (from a proxy), else make one (`newRequestId`). */
export function requestIdFor(incoming: string | undefined): string {
  if (incoming && ACCEPTED_ID.test(incoming)) return incoming;
  if (next === POOL_IDS) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    next = 0;
  }
  const start = next++ * ID_BYTES * 2;
  return poolHex.slice(start, start + ID_BYTES * 2);
}
