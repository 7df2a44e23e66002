import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MissingDependencyException } from '@tiffin/core/internal';
import { type BackendName, WEBGPU_PACKAGES } from '../backend.js';

/** Optional packages (`name@version`) a forced backend needs that are not dependencies of this package. */
const OPTIONAL_PACKAGES: Partial<Record<BackendName, readonly string[]>> = {
  webgpu: [WEBGPU_PACKAGES.dawn, WEBGPU_PACKAGES.tfjs],
};

/** The bare name of `name@version` (scoped names keep their leading `@`). */
function packageName(spec: string): string {
  return spec.slice(0, spec.lastIndexOf('@'));
}

/**
 * Whether `name` is installed where this package's `import(name)` would find it: a
 * `node_modules/<name>/package.json` in this module's folder or one above it (Node's lookup for
 * bare specifiers). Checked on disk, so nothing is loaded.
 */
function installed(name: string): boolean {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true;
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}

/** `name@version` of each optional package `backend` needs that is not installed. */
export function missingBackendPackages(backend: BackendName): string[] {
  return (OPTIONAL_PACKAGES[backend] ?? []).filter((spec) => !installed(packageName(spec)));
}

/**
 * Fails fast, before any model is loaded or downloaded, when a forced backend's optional packages
 * are absent; the one-line message names every package the app must install.
 */
export function assertBackendPackages(backend: BackendName | undefined): void {
  if (!backend) return;
  const needed = OPTIONAL_PACKAGES[backend];
  const missing = missingBackendPackages(backend);
  if (!needed || missing.length === 0) return;
  throw new MissingDependencyException(
    `the ${backend} tfjs backend needs the packages ${needed.join(' and ')} installed by the app ` +
      `(missing: ${missing.map(packageName).join(', ')}); install them with \`npm install ${needed.join(' ')}\``,
  );
}
