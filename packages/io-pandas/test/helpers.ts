import type { HttpResponse } from '@tiffin/core';
import { BufferedHttpRequest, getHeader, readResponseBody } from '@tiffin/core/internal';

export function jsonRequest(
  body: string | Buffer,
  contentType: string | null = 'application/json',
): BufferedHttpRequest {
  return new BufferedHttpRequest({ headers: contentType ? { 'content-type': contentType } : {}, body });
}

export async function bodyText(res: HttpResponse): Promise<string> {
  return (await readResponseBody(res)).toString('utf8');
}

export async function bodyJson(res: HttpResponse): Promise<unknown> {
  return JSON.parse(await bodyText(res));
}

export { getHeader };
