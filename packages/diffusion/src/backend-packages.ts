import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MissingDependencyException } from '@tiffin/core/internal';
import type { BackendName } from './backend-names.js';

/** The optional packages of the `webgpu` backend, pinned to the versions evaluated (not peers: experimental). */
export const WEBGPU_PACKAGES = {
  dawn: 'webgpu@0.6.2',
  tfjs: '@tensorflow/tfjs-backend-webgpu@4.22.0',
} as const;

/**
 * This package's optional peer dependencies (TF.js, its backends, @tiffin/tfjs) with their ranges, read from its
 * own manifest: the one place their versions are written.
 */
const PEERS = (
  createRequire(import.meta.url)('@tiffin/diffusion/package.json') as {
    peerDependencies: Record<string, string>;
  }
).peerDependencies;

/**
 * `name@version` of one of this package's optional peers pinned to one version (TF.js: its packages must match),
 * else `name`: a range such as `>=0.1.0` would not survive being pasted into a shell.
 */
function peer(name: string): string {
  const range = PEERS[name];
  if (range === undefined) throw new Error(`${name} is not a peer dependency of @tiffin/diffusion`);
  return /^\d+\.\d+\.\d+$/.test(range) ? `${name}@${range}` : name;
}

/**
 * The packages (`name@version`) each TF.js backend needs that an ONNX-only install lacks: TF.js is an optional peer,
 * so the app installs it. `onnxruntime` needs none (onnxruntime-node is a dependency).
 */
function backendPackages(backend: BackendName): readonly string[] {
  switch (backend) {
    case 'onnxruntime':
      return [];
    case 'cpu':
      return [peer('@tensorflow/tfjs')];
    case 'wasm':
      return [peer('@tensorflow/tfjs'), peer('@tensorflow/tfjs-backend-wasm')];
    // The native addon check is @tiffin/tfjs's (one place for it).
    case 'tensorflow':
      return [peer('@tensorflow/tfjs'), peer('@tensorflow/tfjs-node'), peer('@tiffin/tfjs')];
    case 'tensorflow-gpu':
      return [peer('@tensorflow/tfjs'), peer('@tensorflow/tfjs-node-gpu'), peer('@tiffin/tfjs')];
    case 'webgpu':
      return [peer('@tensorflow/tfjs'), WEBGPU_PACKAGES.dawn, WEBGPU_PACKAGES.tfjs];
  }
}

/** The bare name of `name@version` or `name` (scoped names keep their leading `@`). */
function packageName(spec: string): string {
  const at = spec.lastIndexOf('@');
  return at > 0 ? spec.slice(0, at) : spec;
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

/** The packages `backend` loads at run time that an ONNX-only install lacks (names, no versions). */
export function backendPackageNames(backend: BackendName): string[] {
  return backendPackages(backend).map(packageName);
}

/** `name@version` of each package `backend` needs that is not installed. */
export function missingBackendPackages(backend: BackendName): string[] {
  return backendPackages(backend).filter((spec) => !installed(packageName(spec)));
}

/** The one-line error for a backend whose packages are missing; null when nothing is missing. */
export function missingBackendError(backend: BackendName): MissingDependencyException | null {
  const missing = missingBackendPackages(backend);
  if (missing.length === 0) return null;
  return new MissingDependencyException(
    `the ${backend} backend (TensorFlow.js engine) needs packages that are not installed ` +
      `(${missing.map(packageName).join(', ')}): run \`npm install ${missing.join(' ')}\``,
  );
}

/**
 * Fails fast, before any model is loaded or downloaded, when a forced backend's packages are absent; the one-line
 * message gives the exact `npm install` command.
 */
export function assertBackendPackages(backend: BackendName | undefined): void {
  const err = backend ? missingBackendError(backend) : null;
  if (err) throw err;
}
