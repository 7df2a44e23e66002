import { defineConfig } from 'tsup';

export default defineConfig({
  // Large answers are written as JSON in worker threads started on dist/answer-thread.js.
  entry: { index: 'src/index.ts', internal: 'src/internal.ts', 'answer-thread': 'src/io/answer-thread.ts' },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: {
    entry: { index: 'src/index.ts', internal: 'src/internal.ts' },
    compilerOptions: { customConditions: [] },
  },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
