import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
