// Module-customization hooks (registered with node:module's `register`, after tsx's, so they run first).
// They decide the format of the user's own files, which tsx leaves to the package scope:
//  - a .ts/.tsx/.js file written with import/export is an ES module even in a CommonJS scope (no
//    package.json, or `npm init -y`'s "type": "commonjs"), as the reader wrote it;
//  - a CommonJS TypeScript file (.cts, or .ts without import/export in a CommonJS scope) is handed to Node's
//    CommonJS loader with no source, so `require` in it is the real one (see commonjs-typescript.ts).
// tsx would otherwise give such files to the CommonJS loader with raw TypeScript in them, or compile them
// into a CommonJS wrapper whose `require` cannot load ES modules on Node 20.
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { usesModuleSyntax } from './module-syntax.js';

interface ResolveResult {
  url: string;
  format?: string | null;
  [key: string]: unknown;
}
interface LoadResult {
  format: string;
  source?: string | ArrayBuffer | Uint8Array | null;
  shortCircuit?: boolean;
  [key: string]: unknown;
}
type NextResolve = (specifier: string, context: object) => Promise<ResolveResult>;
type NextLoad = (url: string, context: { format?: string | null }) => Promise<LoadResult>;

/** Extensions whose format follows the package scope (.mts/.mjs and .cts/.cjs say theirs). */
const SCOPED = new Set(['.ts', '.tsx', '.js']);
const COMMONJS_TYPESCRIPT = new Set(['.ts', '.tsx', '.cts']);
const isCommonJs = (format: string | null | undefined) =>
  format === 'commonjs' || format === 'commonjs-typescript';

/** The reader's files, not installed packages (those keep Node's rules). */
function ownFile(url: string): string | undefined {
  if (!url.startsWith('file:')) return undefined;
  const file = fileURLToPath(url);
  return /[/\\]node_modules[/\\]/.test(file) ? undefined : file;
}

const moduleSyntax = new Map<string, boolean>();

export async function resolve(specifier: string, context: object, next: NextResolve): Promise<ResolveResult> {
  const result = await next(specifier, context);
  const file = ownFile(result.url);
  if (!file || !SCOPED.has(extname(file)) || !isCommonJs(result.format)) return result;
  let esm = moduleSyntax.get(file);
  if (esm === undefined) {
    esm = usesModuleSyntax(file, readFileSync(file, 'utf8'));
    moduleSyntax.set(file, esm);
  }
  return esm ? { ...result, format: 'module' } : result;
}

export async function load(
  url: string,
  context: { format?: string | null },
  next: NextLoad,
): Promise<LoadResult> {
  const file = ownFile(url);
  if (
    file &&
    COMMONJS_TYPESCRIPT.has(extname(file)) &&
    (isCommonJs(context.format) || extname(file) === '.cts')
  ) {
    // No source: Node then loads it with its CommonJS loader, through the '.ts'/'.cts' handler.
    return { format: 'commonjs', source: null, shortCircuit: true };
  }
  return next(url, context);
}
