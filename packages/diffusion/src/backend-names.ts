// The engine names, apart from their selection (backend.ts) and their packages (backend-packages.ts), which both use them.

/**
 * Engines this package can use: tfjs backends (`tfjs-node(-gpu)` register `tensorflow`), or
 * `onnxruntime` (onnxruntime-node runs the text encoder, UNet and VAE; the latent maths around them
 * runs on host arrays, so TF.js is not loaded at all).
 */
export type BackendName = 'tensorflow-gpu' | 'tensorflow' | 'onnxruntime' | 'webgpu' | 'wasm' | 'cpu';
/**
 * The order tried when no backend is forced. `webgpu` is only used when forced: its packages
 * are optional, and the only adapter measured so far (Mesa's software OpenGL) is slower than wasm.
 */
export const BACKEND_PREFERENCE: readonly BackendName[] = [
  'tensorflow-gpu',
  'onnxruntime',
  'tensorflow',
  'wasm',
  'cpu',
];
/** Every name `selectBackend` / `TIFFIN_TF_BACKEND` accepts. */
export const BACKEND_NAMES: readonly BackendName[] = [...BACKEND_PREFERENCE, 'webgpu'];
