// Child process of onnx-without-tfjs.test.ts: imports the package root (as `import '@tiffin/diffusion'` does) while
// TF.js imports throw, then the TF.js entry, and prints what happened as JSON on the last line.
import { createRequire } from 'node:module';

const root = await import('@tiffin/diffusion');
let tfjsEntryError = '';
try {
  await import('@tiffin/diffusion/tfjs');
} catch (e) {
  tfjsEntryError = (e as Error).message;
}
const tfjsModulesLoaded = Object.keys(createRequire(import.meta.url).cache).filter((p) =>
  p.includes('@tensorflow'),
);
console.log(
  JSON.stringify({
    pipeline: typeof root.StableDiffusionPipeline,
    rootHasTfjsNames: 'ClipTextEncoder' in root || 'selectBackend' in root,
    tfjsEntryError,
    tfjsModulesLoaded: tfjsModulesLoaded.length,
  }),
);
