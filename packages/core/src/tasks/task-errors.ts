import {
  GrpcStatus,
  type GrpcStatusCode,
  NotFound,
  ServiceUnavailable,
  TiffinError,
  TooManyRequests,
  truncateForMessage,
} from '../errors/index.js';

/**
 * No such task, or it was forgotten: 404. The code keeps the name diffusion's jobs answered with before
 * tasks moved into core, so clients that branch on it keep working.
 */
export class TaskNotFound extends NotFound {
  static override readonly code: string = 'JOB_NOT_FOUND';
}

/** The answer to an id that names no task (never submitted, expired, or not of a task id's form). */
export function unknownTask(id: string): TaskNotFound {
  return new TaskNotFound(`no task ${truncateForMessage(id)} (unknown, or its result expired)`);
}

/** The task has no result (yet, or ever): 409 `JOB_NOT_DONE`. */
export class TaskNotDone extends TiffinError {
  static override readonly code: string = 'JOB_NOT_DONE';
  static override readonly httpStatus: number = 409;
  override get grpcStatus(): GrpcStatusCode {
    return GrpcStatus.FAILED_PRECONDITION;
  }
}

/** Every task slot holds an unfinished task: 503 `JOBS_FULL` with `Retry-After`. */
export class TasksFull extends ServiceUnavailable {
  static override readonly code: string = 'JOBS_FULL';
}

/** The client holds its share of the unfinished tasks: 429 `JOBS_CLIENT_FULL` with `Retry-After`. */
export class TasksClientFull extends TooManyRequests {
  static override readonly code: string = 'JOBS_CLIENT_FULL';
}

/** The task store cannot be reached (a lost connection): 503 `TASK_STORE_UNAVAILABLE`, nothing recorded. */
export class TaskStoreUnavailable extends ServiceUnavailable {
  static override readonly code: string = 'TASK_STORE_UNAVAILABLE';
}

/** The task's process stopped while it ran, as many times as its `attempts` allow: it failed. */
export class TaskInterrupted extends ServiceUnavailable {
  static override readonly code: string = 'TASK_INTERRUPTED';
}

/** The task's encoded answer is larger than the store keeps (`maxResultBytes`): the task fails with 507. */
export class TaskResultTooLarge extends TiffinError {
  static override readonly code: string = 'TASK_RESULT_TOO_LARGE';
  static override readonly httpStatus: number = 507;
}
