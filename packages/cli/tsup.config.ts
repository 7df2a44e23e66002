import { defineConfig } from 'tsup';

export default defineConfig({
  // format-hooks runs in Node's module-hooks thread, so it is an entry of its own (loader/register.ts).
  entry: { index: 'src/index.ts', bin: 'src/bin.ts', 'format-hooks': 'src/loader/format-hooks.ts' },
  format: ['esm'],
  // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
  dts: { compilerOptions: { customConditions: [] } },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
