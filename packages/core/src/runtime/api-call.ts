import { Context, type ServiceState, type TaskCall } from '../context/context.js';
import type { HttpRequest } from '../http/request.js';
import type { InferenceApi } from '../service/service.js';
import type { CallTrace } from '../tracing/call-trace.js';
import type { BodyReservation } from './body-budget.js';
import type { Invocation } from './invocation.js';
import type { LazyAbort } from './lazy-abort.js';

/** What a transport knows of a call when it starts it. */
export interface ApiCallInit {
  readonly requestId: string;
  readonly api: InferenceApi | undefined;
  readonly abort: LazyAbort;
  readonly task?: TaskCall;
}

/**
 * One call of an API from a transport whose request is not itself the call (a gRPC call, a task's run): the
 * runtime's `Invocation` and the API function's `Context` in one object, as the HTTP exchange is for a request.
 */
export class ApiCall extends Context implements Invocation {
  override requestId: string;
  api: InferenceApi | undefined;
  abort: LazyAbort;
  onClose: Array<() => void> = [];
  startedAt = performance.now();
  timedOut = false;
  override task: TaskCall | undefined;
  bodyReservation: BodyReservation | undefined = undefined;
  trace: CallTrace | undefined = undefined;

  constructor(request: HttpRequest, state: ServiceState, init: ApiCallInit) {
    super(request, state, init.requestId, init.task);
    this.requestId = init.requestId;
    this.api = init.api;
    this.abort = init.abort;
    this.task = init.task;
  }

  /** Whoever runs the call's `onClose` callbacks (the transport, when the call is over) removes the temp dir. */
  protected override removeTempDirWhenDone(): void {
    this.onClose.push(() => {
      this.dispose().catch(() => {});
    });
  }
}

/** The call object every transport hands the runtime: its `Invocation` and the API function's `Context`. */
export type RuntimeCall = Invocation & Context;
