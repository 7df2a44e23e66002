import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Where a tfjs-node package keeps its native addon: `lib/napi-v<N>/tfjs_binding.node`, put there by its
 * install script (which downloads libtensorflow). Returns the reason it cannot be used, or null when present.
 * Checked before importing: a package installed without its addon still registers tfjs's kernels a second
 * time on import, printing a warning per kernel before it fails.
 */
export function nativeAddonProblem(packageDir: string): string | null {
  const lib = join(packageDir, 'lib');
  const found =
    existsSync(lib) &&
    readdirSync(lib).some((d) => d.startsWith('napi-v') && existsSync(join(lib, d, 'tfjs_binding.node')));
  return found
    ? null
    : `installed without its native addon (no ${join(lib, 'napi-v*', 'tfjs_binding.node')}; its install script downloads libtensorflow)`;
}

/**
 * Throws (with the reason) unless the tfjs-node package `pkg` is installed with its native addon, as seen
 * from `from` (a module URL: the package that would import it).
 */
export function assertNativeAddon(pkg: string, from: string): void {
  let packageJson: string;
  try {
    packageJson = createRequire(from).resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`${pkg} is not installed`);
  }
  const problem = nativeAddonProblem(dirname(packageJson));
  if (problem) throw new Error(`${pkg} is ${problem}`);
}
