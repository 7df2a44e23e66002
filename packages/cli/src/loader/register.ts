import { register } from 'node:module';
import { registerCommonJsTypeScript } from './commonjs-typescript.js';

let registered = false;

export interface RegisterOptions {
  /** tsx's ES-module hooks are registered already (bin/tiffin.js registers them to run the CLI's sources). */
  tsxRegistered?: boolean;
}

/**
 * Lets this process import a service in any module format and extension (.ts .mts .cts .js .mjs .cjs) from
 * any folder; idempotent. tsx's ES-module hooks compile TypeScript and resolve `./x.js` to `./x.ts`;
 * Tiffin's hooks, registered after them so they run first, decide the format of the reader's own files
 * (format-hooks.ts); CommonJS TypeScript goes through Node's CommonJS loader (commonjs-typescript.ts).
 */
export async function registerServiceLoaders(options: RegisterOptions = {}): Promise<void> {
  if (registered) return;
  const fromSources = import.meta.url.endsWith('.ts');
  // The sources are run by bin/tiffin.js, which calls this first with tsxRegistered; any other runner of
  // TypeScript sources (vitest, `node --import tsx`) imports the service its own way.
  if (fromSources && !options.tsxRegistered) return;
  registered = true;
  if (!options.tsxRegistered) {
    const tsx = await import('tsx/esm/api');
    tsx.register();
  }
  registerCommonJsTypeScript();
  // From the sources the hooks are TypeScript (tsx, registered first, loads them); bundled, this code sits in
  // a dist/ chunk beside the hooks' own entry (tsup.config.ts).
  register(new URL(fromSources ? './format-hooks.ts' : './format-hooks.js', import.meta.url));
}
