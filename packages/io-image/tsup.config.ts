import { defineConfig } from 'tsup';

export default defineConfig({
  // BMP decoding runs in worker threads started on dist/bmp-thread.js.
  entry: { index: 'src/index.ts', 'bmp-thread': 'src/codec/bmp-thread.ts' },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
