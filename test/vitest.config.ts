import { defineProject } from 'vitest/config';

// Repository-wide checks: self-containment, the README's commands, packing for npm users.
export default defineProject({
  test: {
    name: 'repo',
    include: ['repo/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
