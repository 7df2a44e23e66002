/**
 * Tiffin's optional packages and what a service gets from each: named when a service imports one that is
 * not installed. docs/your-project.md lists the same packages.
 */
const EXTRAS: Readonly<Record<string, string>> = {
  '@tiffin/io-image': 'Image',
  '@tiffin/io-json': 'JSON models (jsonModel)',
  '@tiffin/io-pandas': 'PandasDataFrame',
  '@tiffin/diffusion': 'Stable Diffusion',
  '@tiffin/client': 'The client',
  '@tiffin/demo-model': 'The demo model',
};

/** What `pkg` gives a service, when it is one of Tiffin's optional packages. */
export function extraFeature(pkg: string): string | undefined {
  return Object.hasOwn(EXTRAS, pkg) ? EXTRAS[pkg] : undefined;
}
