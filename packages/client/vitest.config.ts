import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'client',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Type tests (*.test-d.ts: expectTypeOf, @ts-expect-error) are checked by tsc in every test run.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
