import { defineConfig } from 'tsup';

export default defineConfig({
  // Large JSON bodies and answers are read and written in worker threads started on dist/json-thread.js.
  entry: {
    index: 'src/index.ts',
    descriptor: 'src/descriptor.ts',
    internal: 'src/internal.ts',
    tasks: 'src/tasks.ts',
    // The contract suites import vitest (an optional peer dependency, kept external as tsup keeps peers).
    testing: 'src/testing.ts',
    'json-thread': 'src/io/json-thread.ts',
  },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: {
    entry: {
      index: 'src/index.ts',
      descriptor: 'src/descriptor.ts',
      internal: 'src/internal.ts',
      tasks: 'src/tasks.ts',
      testing: 'src/testing.ts',
    },
    compilerOptions: { customConditions: [] },
  },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
