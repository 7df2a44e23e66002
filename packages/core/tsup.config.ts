import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/descriptor.ts', 'src/internal.ts'],
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
