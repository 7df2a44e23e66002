import { readFileSync } from 'node:fs';
import Module from 'node:module';
import { transformSync } from 'esbuild';
import { typeScriptLoader } from './module-syntax.js';

interface CommonJsModule {
  _compile(code: string, filename: string): void;
}
type ExtensionHandler = (module: CommonJsModule, filename: string) => void;
type ResolveFilename = (
  request: string,
  parent: { filename?: string } | undefined,
  ...rest: unknown[]
) => string;
// Node's CommonJS loader internals that TypeScript runners (tsx, ts-node) extend; not in @types/node.
const loader = Module as unknown as {
  _extensions: Record<string, ExtensionHandler>;
  _resolveFilename: ResolveFilename;
};

/** What a TypeScript `./x.js` import means: the .ts beside it when there is no .js. */
const SOURCE_EXTENSION: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.cjs': ['.cts'] };

/**
 * CommonJS TypeScript (.cts, and .ts/.tsx in a CommonJS scope) for Node's own CommonJS loader: types are
 * stripped and import syntax becomes `require`. Only TypeScript extensions are handled; .js stays Node's, so
 * `require('@tiffin/core')` loads the very ES module the CLI imported (Node's require(esm)), one module graph.
 * tsx's CommonJS hook is not used for this: it also recompiles ES-module .js files into CommonJS copies.
 */
export function registerCommonJsTypeScript(): void {
  const compile: ExtensionHandler = (module, filename) => {
    const { code } = transformSync(readFileSync(filename, 'utf8'), {
      loader: typeScriptLoader(filename),
      format: 'cjs',
      sourcefile: filename,
      sourcemap: 'inline',
      target: `node${process.versions.node}`,
    });
    module._compile(code, filename);
  };
  for (const ext of ['.ts', '.tsx', '.cts']) loader._extensions[ext] = compile;

  const resolveFilename = loader._resolveFilename;
  loader._resolveFilename = function resolveTypeScriptSource(request, parent, ...rest) {
    try {
      return resolveFilename.call(this, request, parent, ...rest);
    } catch (err) {
      const ext = /\.c?js$/.exec(request)?.[0];
      const fromTypeScript = parent?.filename && /\.[cm]?tsx?$/.test(parent.filename);
      if (!ext || !fromTypeScript || !request.startsWith('.')) throw err;
      for (const source of SOURCE_EXTENSION[ext] ?? []) {
        try {
          return resolveFilename.call(this, request.slice(0, -ext.length) + source, parent, ...rest);
        } catch {}
      }
      throw err;
    }
  };
}
