import { register } from 'node:module';
import { registerCommonJsTypeScript } from './commonjs-typescript.js';

let registered = false;

/**
 * Lets this process import a service in any module format and extension (.ts .mts .cts .js .mjs .cjs) from
 * any folder; idempotent. tsx's ES-module hooks compile TypeScript and resolve `./x.js` to `./x.ts`;
 * Tiffin's hooks, registered after them so they run first, decide the format of the reader's own files
 * (format-hooks.ts); CommonJS TypeScript goes through Node's CommonJS loader (commonjs-typescript.ts).
 */
export async function registerServiceLoaders(): Promise<void> {
  if (registered) return;
  registered = true;
  // Run from the sources, a TypeScript loader is active already (bin/tiffin.js registers tsx's ES-module
  // hooks in a checkout; the CLI's tests run `node --import tsx`), and the hooks file is TypeScript too.
  const fromSources = import.meta.url.endsWith('.ts');
  if (!fromSources) {
    const tsx = await import('tsx/esm/api');
    tsx.register();
  }
  registerCommonJsTypeScript();
  // Bundled, this code sits in a dist/ chunk beside the hooks' own entry (tsup.config.ts).
  register(new URL(fromSources ? './format-hooks.ts' : './format-hooks.js', import.meta.url));
}
