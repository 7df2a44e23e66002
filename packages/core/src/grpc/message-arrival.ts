import { constants as http2Constants, type ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { GrpcStatus } from '../errors/index.js';
import type { BodyBudget } from '../runtime/body-budget.js';

export interface MessageArrivalLimits {
  /** Milliseconds a call's request message may take to arrive once the call started. */
  timeoutMs: number;
  /** The budget the message's bytes are counted against as they arrive (shared with HTTP bodies). */
  budget: BodyBudget;
  /** Told of each call it ended, with the status (a metric). */
  onEnded?: (code: number) => void;
}

/**
 * The bounds on a call's request message while it arrives: it must have arrived `timeoutMs` after the call
 * started, and its bytes are counted against the server's body budget as they come (held until the call ends).
 * A call past either ends with its status (DEADLINE_EXCEEDED; UNAVAILABLE `BODY_BUDGET_FULL`) and its stream is
 * closed, so what grpc-js buffered of the message is dropped. Watching stops at the first message or the
 * half-close. Must be the first interceptor: it is handed grpc-js's own call, which holds the HTTP/2 stream.
 */
export function messageArrivalInterceptor({
  timeoutMs,
  budget,
  onEnded,
}: MessageArrivalLimits): grpc.ServerInterceptor {
  return (_method, call) => {
    // grpc-js's call keeps its HTTP/2 stream under this name (no public one).
    const stream = (call as { stream?: ServerHttp2Stream }).stream;
    let timer: NodeJS.Timeout | undefined;
    let received = 0;
    const end = (status: Pick<grpc.StatusObject, 'code' | 'details'>) => {
      stop();
      onEnded?.(status.code);
      call.sendStatus(status);
      // The status ends only the server's side: the stream stays open for the client's bytes (and grpc-js
      // keeps what arrived) until it is closed.
      stream?.close(http2Constants.NGHTTP2_NO_ERROR);
    };
    const reservation = budget.open((release) => stream?.once('close', release));
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      try {
        reservation.reach(received);
      } catch (err) {
        end({ code: GrpcStatus.UNAVAILABLE, details: (err as Error).message });
      }
    };
    const stop = () => {
      clearTimeout(timer);
      stream?.off('data', onData);
    };
    // grpc-js paused the stream before the interceptors ran: this listener resumes nothing, and it sees each
    // chunk as grpc-js's decoder does.
    stream?.on('data', onData);
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        timer = setTimeout(
          () =>
            end({
              code: GrpcStatus.DEADLINE_EXCEEDED,
              details: `The request message did not arrive within ${timeoutMs / 1000} seconds`,
            }),
          timeoutMs,
        );
        next({
          onReceiveMessage: (message, proceed) => {
            stop();
            proceed(message);
          },
          onReceiveHalfClose: (proceed) => {
            stop();
            proceed();
          },
          onCancel: stop,
        });
      },
      sendStatus: (status, next) => {
        stop();
        next(status);
      },
    });
  };
}
