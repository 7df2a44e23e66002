import type { Logger } from '../logging/logger.js';

/**
 * The process-level net of a server that owns its process: an exception or rejection that escapes a request
 * (a stream error in a library, a callback throwing) is logged with its stack and the server keeps serving
 * the other requests, instead of the whole process ending. Installed by `serve()` only when it owns the
 * process (`handleSignals`, as the CLI and built packages run it); tests and embedders keep Node's default,
 * so a stray error still fails them. Returns the function that removes it.
 */
export function installSafetyNet(logger: Logger): () => void {
  const onException = (err: Error, origin: string) =>
    logger.log('error', 'uncaught exception (the server keeps running)', {
      origin,
      error: err?.message,
      stack: err?.stack,
    });
  const onRejection = (reason: unknown) =>
    logger.log('error', 'unhandled rejection (the server keeps running)', {
      error: reason instanceof Error ? reason.message : String(reason),
      stack: reason instanceof Error ? reason.stack : undefined,
    });
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
