import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { extraFeature } from './extras.js';
import { isTypeScript, typeScriptLoader } from './module-syntax.js';
import { addPackageCommand } from './package-manager.js';

/**
 * What a reader needs from an error raised while importing their service: where (file:line:column) for
 * syntax and type-stripping errors, what to install for a package that is missing, else Node's own message.
 */
export function describeLoadError(err: unknown, serviceFile: string): string {
  const message = err instanceof Error ? err.message : String(err);
  return (
    missingPackage(err, message, serviceFile) ??
    transformError(message) ??
    syntaxError(err, message) ??
    syntaxErrorIn(serviceFile, err) ??
    commonJsInModule(message, serviceFile) ??
    message.split('\n')[0] ??
    message
  );
}

/**
 * Node 20 reports an ES module's SyntaxError without its place; when the service file itself does not
 * parse, esbuild's parser says where.
 */
function syntaxErrorIn(serviceFile: string, err: unknown): string | undefined {
  if (!(err instanceof SyntaxError)) return undefined;
  try {
    transformSync(readFileSync(serviceFile, 'utf8'), {
      loader: isTypeScript(serviceFile) ? typeScriptLoader(serviceFile) : 'js',
      sourcefile: serviceFile,
    });
  } catch (parseError) {
    return transformError((parseError as Error).message);
  }
  return undefined;
}

/** The package.json that decides a file's module format: the nearest one above it (Node's rule). */
function nearestPackageJson(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'package.json');
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * `require`/`module.exports` in a file that is an ES module ("type": "module", or .mts/.mjs), naming which
 * package.json says so (Node's message names it; else the nearest above the service), so the reader knows which
 * file to change.
 */
function commonJsInModule(message: string, serviceFile: string): string | undefined {
  if (!/^(require|module|exports) is not defined in ES module scope/.test(message)) return undefined;
  if (/\.m[jt]s$/.test(serviceFile))
    return `${serviceFile} is an ES module (its .${serviceFile.split('.').pop()} extension says so): use import/export, or name it .cts/.cjs`;
  const manifest =
    /'([^']*package\.json)' contains "type": "module"/.exec(message)?.[1] ?? nearestPackageJson(serviceFile);
  const which = manifest ? `${manifest} says "type": "module"` : 'its package.json says "type": "module"';
  return `${serviceFile} is an ES module (${which}): use import/export, or name it .cts/.cjs`;
}

/** A bare specifier's package name: `@scope/name` or `name`, without a subpath. */
function packageName(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.includes(':')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function missingPackage(err: unknown, message: string, serviceFile: string): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  // ESM: "Cannot find package 'x' imported from /a/b.ts"; CommonJS: "Cannot find module 'x'\nRequire stack: …"
  const match = /Cannot find (?:package|module) '([^']+)'(?: imported from (\S+))?/.exec(message);
  const pkg = match?.[1] && packageName(match[1]);
  if (!pkg) return undefined;
  const importer = match?.[2] ?? /Require stack:\n- (.+)/.exec(message)?.[1] ?? serviceFile;
  const add = addPackageCommand(dirname(serviceFile), pkg);
  const feature = extraFeature(pkg);
  return feature
    ? `${feature} needs ${pkg}: ${add}`
    : `${importer} imports '${pkg}', which is not installed: ${add}`;
}

/** esbuild (tsx, or the CommonJS TypeScript handler): "Transform failed…\n/a/b.ts:3:10: ERROR: text". */
function transformError(message: string): string | undefined {
  const match = /^(.+?):(\d+):(\d+): ERROR: (.+)$/m.exec(message);
  if (!match || !/Transform failed/.test(message)) return undefined;
  const [, file, line, column, text] = match;
  // esbuild counts columns from 0; editors and Node from 1.
  return `${file}:${line}:${Number(column) + 1}: ${text}`;
}

/**
 * V8's SyntaxError (plain JavaScript) keeps its place in the stack's head: "file:line", the source line,
 * then a caret under the column.
 */
function syntaxError(err: unknown, message: string): string | undefined {
  if (!(err instanceof SyntaxError) || !err.stack) return undefined;
  const [where, , caret] = err.stack.split('\n');
  const match = where ? /^(\S+):(\d+)$/.exec(where) : null;
  if (!match?.[1] || !match[2]) return undefined;
  const file = match[1].startsWith('file:') ? fileURLToPath(match[1]) : match[1];
  const column = caret && /^\s*\^/.test(caret) ? caret.indexOf('^') + 1 : 1;
  return `${file}:${match[2]}:${column}: ${message.split('\n')[0]}`;
}
