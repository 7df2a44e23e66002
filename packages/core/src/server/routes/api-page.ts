import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { NotFound, truncateForMessage } from '../../errors/index.js';
import type { Exchange } from '../exchange.js';
import { INITIALIZER } from './api-page-script.js';

/** Swagger UI files served from the installed package (no CDN): name → content type. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * The page loads only its own files: Swagger UI's bundle and initializer are served from here (no inline
 * script), its CSS uses inline style attributes and data: images, and it fetches ./docs.json and the APIs.
 * Framing is refused (clickjacking), both by CSP and by the older X-Frame-Options.
 */
const PAGE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  [
    'content-security-policy',
    [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; '),
  ],
  ['x-frame-options', 'DENY'],
  ['referrer-policy', 'no-referrer'],
];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function pageHtml(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <title>${escapeHtml(title)} · API</title>
  <link rel="stylesheet" type="text/css" href="./static_content/swagger-ui.css">
  <link rel="stylesheet" type="text/css" href="./static_content/index.css">
  <link rel="icon" type="image/png" href="./static_content/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="./static_content/swagger-ui-bundle.js" charset="UTF-8"></script>
  <script src="./static_content/swagger-initializer.js" charset="UTF-8"></script>
</body>
</html>
`;
}

function swaggerDistDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}

/** The interactive API page at `/` and its assets at `/static_content/<file>`. */
export class ApiPage {
  private readonly html: string;
  private readonly cache = new Map<string, Buffer>();
  private distDir: string | undefined;

  constructor(title: string) {
    this.html = pageHtml(title);
  }

  readonly index = (ctx: Exchange): void => {
    ctx.status = 200;
    ctx.set('content-type', 'text/html; charset=utf-8');
    for (const [name, value] of PAGE_HEADERS) ctx.set(name, value);
    ctx.responseBody = this.html;
  };

  /** Paths this page serves, for the route table. */
  assetPaths(): string[] {
    return ['swagger-initializer.js', ...Object.keys(ASSETS)].map((name) => `/static_content/${name}`);
  }

  readonly asset = (ctx: Exchange): void => {
    const name = ctx.path.slice('/static_content/'.length);
    ctx.status = 200;
    ctx.set('cache-control', 'public, max-age=3600');
    if (name === 'swagger-initializer.js') {
      ctx.set('content-type', 'text/javascript; charset=utf-8');
      ctx.responseBody = INITIALIZER;
      return;
    }
    const type = ASSETS[name];
    if (!type) throw new NotFound(`Not Found: no asset ${truncateForMessage(name)}`);
    let bytes = this.cache.get(name);
    if (!bytes) {
      this.distDir ??= swaggerDistDir();
      bytes = readFileSync(join(this.distDir, name));
      this.cache.set(name, bytes);
    }
    ctx.set('content-type', type);
    ctx.responseBody = bytes;
  };
}
