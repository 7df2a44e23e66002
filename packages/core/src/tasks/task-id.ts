/**
 * The form of every task id: a UUID as `crypto.randomUUID()` writes it (36 characters, lowercase hex and
 * hyphens), what the memory, disk and Redis stores mint, and what a store of one's own mints too. The task
 * routes answer an id of any other form as an unknown task (404) without asking the store, so what a client
 * writes in `?id=` reaches a store's keys only in this form (never one of a store's own key names).
 */
const TASK_ID_FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `id` has the form of a task id (`TASK_ID_FORM`); it may still name no task. */
export function isTaskId(id: string): boolean {
  return TASK_ID_FORM.test(id);
}
