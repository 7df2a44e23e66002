import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Service } from '@tiffin/core';

/** Koa middleware as `Service.mount` takes it. */
type MountedMiddleware = Parameters<Service['mount']>[0];

/** Where the page lives: `/ui` (and `/ui/`), its script modules and style beside it. */
export const GENERATION_PAGE_PATH = '/ui';

const SCRIPT_TYPE = 'text/javascript; charset=utf-8';

/**
 * The page's files, by the path they are served at, with their media types: the HTML, the style, and every
 * `.js` module of the folder (the page's script is ES modules loaded as they are, no build step; a module must
 * be served as JavaScript or the browser refuses it).
 */
function pageFiles(folder: string): Array<{ file: string; path: string; type: string }> {
  const modules = readdirSync(folder)
    .filter((name) => /^[a-z0-9-]+\.js$/.test(name))
    .map((file) => ({ file, path: `${GENERATION_PAGE_PATH}/${file}`, type: SCRIPT_TYPE }));
  return [
    { file: 'index.html', path: GENERATION_PAGE_PATH, type: 'text/html; charset=utf-8' },
    { file: 'style.css', path: `${GENERATION_PAGE_PATH}/style.css`, type: 'text/css; charset=utf-8' },
    ...modules,
  ];
}

/**
 * Everything the page loads comes from this service (no CDN, no inline script or style): the policy says so,
 * and previews arrive as data: URLs, results as blob: URLs.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self' blob:",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The package's `ui/` folder: beside `dist/` when built (dist/index.js → ../ui), two folders up from this
 * file when run from sources (src/service → ../../ui).
 */
function pageFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', 'ui'), join(here, '..', '..', 'ui')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`the generation page's files (ui/index.html) are missing beside ${here}`);
}

/**
 * The generation page (`GET /ui`): a prompt form with live previews, results and a history, on the service's
 * own task routes. Mounted public (the page holds no secret; with an API token set, it asks for the token and
 * sends it on every API call, which still need it). Files are read once, at creation.
 */
export function generationPage(): MountedMiddleware {
  const folder = pageFolder();
  const served = new Map(
    pageFiles(folder).map(({ file, path, type }) => [path, { body: readFileSync(join(folder, file)), type }]),
  );
  return async (ctx, next) => {
    const path = ctx.path === `${GENERATION_PAGE_PATH}/` ? GENERATION_PAGE_PATH : ctx.path;
    const file = served.get(path);
    if (!file || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.set('content-security-policy', CONTENT_SECURITY_POLICY);
    ctx.set('x-frame-options', 'DENY');
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'no-referrer');
    ctx.set('cache-control', 'no-cache');
    ctx.type = file.type;
    ctx.body = file.body;
  };
}
