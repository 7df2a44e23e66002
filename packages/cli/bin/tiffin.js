#!/usr/bin/env node
// The `tiffin` command. Installed from npm it runs the build (dist/bin.js). In a checkout of the
// repository (src/ is there; it is not published) it runs the sources in this same process: tsx compiles
// TypeScript and workspace packages resolve to their sources (the `source` export condition), so
// `npx tiffin` works right after `pnpm install`, with no build step. One process either way, so
// SIGTERM/SIGINT reach the server itself.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

// `npx tiffin …` runs us under `sh -c`, and on SIGTERM npm signals that shell, which dies without passing
// it on. Run by a package manager (never a daemon), a new parent means ours is gone: stop as on SIGTERM.
if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 500);
  watch.unref();
}

const sources = new URL('../src/bin.ts', import.meta.url);

if (existsSync(sources)) {
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  // Registered last, so it runs first: every resolution also tries the `source` condition.
  const addSourceCondition = `export function resolve(specifier, context, next) {
    return next(specifier, { ...context, conditions: ['source', ...context.conditions] });
  }`;
  register(`data:text/javascript,${encodeURIComponent(addSourceCondition)}`);
  // The rest of the service loaders (Tiffin's module-format hooks, CommonJS TypeScript), as the build has them.
  const loaders = await import(new URL('../src/loader/register.ts', import.meta.url).href);
  await loaders.registerServiceLoaders({ tsxRegistered: true });
  await import(sources.href);
} else {
  await import('../dist/bin.js');
}
