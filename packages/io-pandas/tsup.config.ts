import { defineConfig } from 'tsup';

export default defineConfig({
  // Table decoding runs in worker threads started on dist/table-thread.js.
  entry: { index: 'src/index.ts', 'table-thread': 'src/formats/table-thread.ts' },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
