import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    name: 'demo-model',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
