import type Koa from 'koa';
import { GatewayTimeout } from '../../errors/index.js';
import type { Logger } from '../logger.js';
import type { RequestState } from '../state.js';

/**
 * If the response has not started within the API's timeout (else the server's), answer 504 (D4/D5) and
 * abort the handler's signal. Once the inner middleware returns (a streamed body included) no timeout applies.
 */
export function timeoutMiddleware(defaultSeconds: number, logger: Logger): Koa.Middleware<RequestState> {
  return async (ctx, next) => {
    const seconds = ctx.state.api?.timeout ?? defaultSeconds;
    if (!(seconds > 0) || !Number.isFinite(seconds)) return next();
    let timer: NodeJS.Timeout | undefined;
    const work = next();
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), seconds * 1000);
    });
    try {
      const outcome = await Promise.race([work, expired]);
      if (outcome !== 'timeout') return;
    } finally {
      clearTimeout(timer);
    }
    ctx.state.timedOut = true;
    const error = new GatewayTimeout(`Not able to process the request in ${seconds} seconds`);
    ctx.state.abort.abort(error);
    // The handler keeps running until it notices the abort; its result or error is only logged.
    work.catch((err: unknown) =>
      logger.log('warn', 'handler failed after its timeout', {
        requestId: ctx.state.requestId,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    throw error;
  };
}
