import { cpSync } from 'node:fs';
import { defineConfig } from 'tsup';

// A function of the command line's flags, so a build elsewhere (`--out-dir`, as `test/built-package.test.ts`
// builds) ships the scripts beside its bundle too.
export default defineConfig((flags) => {
  const outDir = flags.outDir ?? 'dist';
  return {
    entry: { index: 'src/index.ts' },
    format: ['esm'],
    outDir,
    // Consumers resolve through dist; the 'source' condition is for tests and tsc only.
    dts: { entry: { index: 'src/index.ts' }, compilerOptions: { customConditions: [] } },
    clean: true,
    sourcemap: true,
    target: 'node20',
    // The Lua scripts are read at run time from `commands/` beside the bundle (`src/store-commands.ts`).
    onSuccess: async () => {
      cpSync('src/commands', `${outDir}/commands`, { recursive: true });
    },
  };
});
