import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'fuzz',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
  },
});
