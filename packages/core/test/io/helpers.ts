import { expect } from 'vitest';
import { TiffinError } from '../../src/errors/index.js';
import { BufferedHttpRequest } from '../../src/http/request.js';
import { getHeader, type HttpResponse, readResponseBody } from '../../src/http/response.js';

export function request(body: string | Buffer, contentType?: string, url = '/api'): BufferedHttpRequest {
  return new BufferedHttpRequest({ url, headers: contentType ? { 'content-type': contentType } : {}, body });
}

export async function text(res: HttpResponse): Promise<string> {
  return (await readResponseBody(res)).toString('utf8');
}

export const header = getHeader;

/** A multipart/form-data body: plain fields (`value` string) and file parts (`filename`, `type`). */
export interface PartSpec {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

export function multipart(boundary: string, parts: PartSpec[]): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** Assert that `outcome` (a promise, or a call that may throw at once) fails with a TiffinError of `status` whose message matches. */
export async function expectClientError(
  outcome: Promise<unknown> | (() => unknown),
  status: number,
  message?: string | RegExp,
): Promise<TiffinError> {
  // A call is made inside a promise: a descriptor step that answers at once also throws at once.
  const promise = typeof outcome === 'function' ? Promise.resolve().then(outcome) : outcome;
  const err = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TiffinError);
  const te = err as TiffinError;
  expect(te.httpStatus).toBe(status);
  if (typeof message === 'string') expect(te.message).toBe(message);
  else if (message) expect(te.message).toMatch(message);
  return te;
}
