import { defineConfig } from 'tsup';

export default defineConfig({
  // The runner is its own bundle: each model instance is a worker thread started on dist/runner-worker.js;
  // inspect-worker.js reads a signature off the event loop.
  entry: {
    index: 'src/index.ts',
    'runner-worker': 'src/runner-worker.ts',
    'inspect-worker': 'src/inspect-worker.ts',
  },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
