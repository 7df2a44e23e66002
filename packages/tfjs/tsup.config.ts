import { defineConfig } from 'tsup';

export default defineConfig({
  // The runner worker is its own bundle: the runner pool starts it as a worker thread from dist/runner-worker.js.
  entry: { index: 'src/index.ts', 'runner-worker': 'src/runner-worker.ts' },
  format: ['esm'],
  // Optional native backends are loaded lazily at run time when installed; never bundle them.
  external: ['@tensorflow/tfjs-node', '@tensorflow/tfjs-node-gpu'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
