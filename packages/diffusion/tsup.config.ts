import { defineConfig } from 'tsup';

export default defineConfig({
  // The model worker is its own bundle: the service starts it as a worker thread from dist/model-worker.js.
  // `tfjs` is the TF.js engine's entry (`@tiffin/diffusion/tfjs`), apart so the root never loads TF.js; `testing`
  // (`@tiffin/diffusion/testing`) is what tests build models with.
  entry: {
    index: 'src/index.ts',
    tfjs: 'src/tfjs.ts',
    testing: 'src/testing.ts',
    'model-worker': 'src/service/model-worker.ts',
    // Uploads are resized in core's task threads, started on dist/resize-thread.js.
    'resize-thread': 'src/service/kinds/resize-thread.ts',
  },
  format: ['esm'],
  // TF.js and its backends are optional peers, loaded lazily at run time when installed; never bundle them.
  external: [/^@tensorflow\//, '@tiffin/tfjs'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: {
    entry: { index: 'src/index.ts', tfjs: 'src/tfjs.ts', testing: 'src/testing.ts' },
    compilerOptions: { customConditions: [] },
  },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
