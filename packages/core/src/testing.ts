// `@tiffin/core/testing`: the suites a task store of another package or of a user runs in its own vitest tests,
// as the memory, disk and Redis stores do: `describeTaskStore(name, (limits) => new MyStore(limits), durable?)`
// (the store alone), `describeTaskRoutes` (the same store behind a listening server's task routes) and
// `describeTaskWebhooks` (what the store hands back so that a task it ended is told to its webhook).
// It imports vitest (an optional peer dependency of `@tiffin/core`, needed by this entry alone); nothing
// `@tiffin/core` or `@tiffin/core/tasks` loads imports it. At most 6 names (`test/repo/core-entry.test.ts`).

export { describeTaskRoutes, NOT_TASK_IDS } from './testing/task-routes-contract.js';
export {
  type ContractLimits,
  type DurableContract,
  describeTaskStore,
} from './testing/task-store-contract.js';
export { describeTaskWebhooks } from './testing/task-webhooks-contract.js';
