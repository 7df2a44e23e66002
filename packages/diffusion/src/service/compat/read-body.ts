import type { IncomingMessage } from 'node:http';

/** A request body bigger than the bound it was read with. */
export class BodyTooLarge extends Error {}

/**
 * A mounted route's request body, read whole up to `maxBytes` (refused from `content-length` before reading,
 * and again as bytes arrive, so a lying or absent header cannot make it allocate more).
 */
export async function readBoundedBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLarge();
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > maxBytes) throw new BodyTooLarge();
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}
