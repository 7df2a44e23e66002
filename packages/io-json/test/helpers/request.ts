import type { HttpResponse } from '@tiffin/core';
import { BufferedHttpRequest, readResponseBody } from '@tiffin/core/internal';

export function jsonRequest(body: string): BufferedHttpRequest {
  return new BufferedHttpRequest({ headers: { 'content-type': 'application/json' }, body });
}

export async function bodyText(response: HttpResponse): Promise<string> {
  return (await readResponseBody(response)).toString('utf8');
}
