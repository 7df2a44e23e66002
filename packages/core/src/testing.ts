// `@tiffin/core/testing`: the suites a task store of another package or of a user runs in its own vitest tests,
// as the memory, disk and Redis stores do: `describeTaskStore(name, (limits) => new MyStore(limits), durable?)`.
// It imports vitest (an optional peer dependency of `@tiffin/core`, needed by this entry alone); nothing
// `@tiffin/core` or `@tiffin/core/tasks` loads imports it. At most 4 names (`test/repo/core-entry.test.ts`).

export {
  type ContractLimits,
  type DurableContract,
  describeTaskStore,
} from './testing/task-store-contract.js';
