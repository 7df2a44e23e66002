import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'tasks-redis',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
