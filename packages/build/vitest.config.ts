import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'build',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
