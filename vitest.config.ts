import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'examples/*', 'test'],
    // CI reads a plain "N passed, N failed" line that .ci/run derives from this JSON report.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-results.json' },
  },
});
