import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { resolve, sep } from 'node:path';

/**
 * Remove the files a mounted body parser (koa-body, with formidable) left in the system temp folder for a
 * request's uploads (`ctx.request.files`), once the request is over: a handler that keeps an upload moves it
 * during the request. Files outside the temp folder (a parser told `uploadDir`) are the service's to keep.
 * A parse that failed (a stalled or aborted upload) needs nothing here: formidable removes its partial files
 * when the request errors, which the body guard makes it do on a stall.
 */
export function removeUploadedFiles(request: object): void {
  // `files` is what koa-body adds to Koa's request (absent from Koa's own type).
  const files = (request as { files?: unknown }).files;
  if (files === null || typeof files !== 'object') return;
  const temp = resolve(tmpdir()) + sep;
  for (const entry of Object.values(files as Record<string, unknown>)) {
    for (const file of Array.isArray(entry) ? entry : [entry]) {
      const path = (file as { filepath?: unknown } | null)?.filepath;
      if (typeof path !== 'string' || !resolve(path).startsWith(temp)) continue;
      unlink(path).catch(() => {});
    }
  }
}
