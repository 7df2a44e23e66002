import { defineConfig } from 'tsup';

// The entries a package.json export names, each with its .d.ts. The contract suites (`testing`) import vitest,
// an optional peer dependency, kept external as tsup keeps peers.
const entries = {
  index: 'src/index.ts',
  descriptor: 'src/descriptor.ts',
  internal: 'src/internal.ts',
  tasks: 'src/tasks.ts',
  testing: 'src/testing.ts',
};

export default defineConfig({
  // Large JSON bodies and answers are read and written in worker threads started on dist/json-thread.js.
  entry: { ...entries, 'json-thread': 'src/io/json-thread.ts' },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: entries, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
