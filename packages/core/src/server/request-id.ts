import { randomUUID } from 'node:crypto';

/** Ids a proxy may pass in `x-request-id`: short, printable, no separators that could forge log fields. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Reuse a well-formed incoming request id (from a proxy), else make one. */
export function requestIdFor(incoming: string | undefined): string {
  return incoming && ACCEPTED_ID.test(incoming) ? incoming : randomUUID();
}
