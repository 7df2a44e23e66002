// The fuzz target as its own process (`node --conditions=source --import tsx src/server.ts`): the runner
// measures its memory, sees it exit if anything kills it, and reads one JSON line with its addresses.
import { serve, serveGrpc } from '@tiffin/core';
import { GRPC_INPUT_NOT_READABLE } from '@tiffin/core/internal';
import { loadDanfo } from '@tiffin/io-pandas';
import { fuzzService } from './service.js';

const svc = fuzzService();
// danfo (TensorFlow.js) loads lazily and takes seconds; load it first so that it is not counted as a hang.
await loadDanfo();
/**
 * Only what points at a bug goes to stderr (the access log of 100,000 requests would cost more than the
 * fuzzing): errors, and gRPC inputs a decoder failed on with an error of its own. The gRPC server answers
 * those INVALID_ARGUMENT, as a client's mistake, so the status alone would not show them.
 */
const pointsAtBug = (level: string, msg: string) => level === 'error' || msg === GRPC_INPUT_NOT_READABLE;
const errors = {
  log(level: string, msg: string, fields?: Record<string, unknown>) {
    if (pointsAtBug(level, msg)) process.stderr.write(`${JSON.stringify({ level, msg, ...fields })}\n`);
  },
};
// No safety net: an error escaping a request must end this process, so the fuzzer reports it as a crash.
const http = await serve(svc, { port: 0, logger: errors, safetyNet: false, maxConcurrency: 1024 });
const rpc = await serveGrpc(svc, {
  port: 0,
  reflection: false,
  runStartupHooks: false,
  logger: errors,
});
process.stdout.write(`${JSON.stringify({ http: http.url, grpc: rpc.address, pid: process.pid })}\n`);
