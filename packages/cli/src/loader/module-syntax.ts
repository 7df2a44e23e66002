import { extname } from 'node:path';
import { initSync, parse } from 'es-module-lexer';
import { transformSync } from 'esbuild';

let lexerReady = false;

const TYPESCRIPT = new Set(['.ts', '.tsx', '.cts', '.mts']);

/** Whether `file` is TypeScript (stripped by esbuild before it runs). */
export function isTypeScript(file: string): boolean {
  return TYPESCRIPT.has(extname(file));
}

/** esbuild's loader for a TypeScript file. */
export function typeScriptLoader(file: string): 'ts' | 'tsx' {
  return extname(file) === '.tsx' ? 'tsx' : 'ts';
}

/**
 * Whether the file uses ES-module syntax (import/export statements, import.meta). TypeScript is stripped
 * first, so `import type` alone does not count and type syntax cannot confuse the lexer. A file that does not
 * parse counts as a module: the ES-module path then reports the error with its location.
 */
export function usesModuleSyntax(file: string, source: string): boolean {
  if (!lexerReady) {
    initSync();
    lexerReady = true;
  }
  try {
    const code = isTypeScript(file)
      ? transformSync(source, { loader: typeScriptLoader(file), sourcefile: file }).code
      : source;
    return parse(code, file)[3];
  } catch {
    return true;
  }
}
