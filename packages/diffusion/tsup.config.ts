import { defineConfig } from 'tsup';

export default defineConfig({
  // The model worker is its own bundle: the service starts it as a worker thread from dist/model-worker.js.
  entry: { index: 'src/index.ts', 'model-worker': 'src/service/model-worker.ts' },
  format: ['esm'],
  // Optional native backends are loaded lazily at run time when installed; never bundle them.
  external: ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
