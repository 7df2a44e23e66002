// Reads models' signatures off the event loop (inspect-thread.ts starts it, one per process): ONNX Runtime opens
// a file synchronously, which on the server's thread would stall every other call for as long as the open takes.
import { parentPort } from 'node:worker_threads';
import { inspectOnnx } from './inspect.js';

parentPort?.on('message', ({ id, path }: { id: number; path: string }) => {
  inspectOnnx(path, undefined).then(
    (read) => parentPort?.postMessage({ id, read }),
    (err: unknown) =>
      parentPort?.postMessage({
        id,
        error: err instanceof Error ? err.message : String(err),
        code: (err as { code?: unknown }).code,
      }),
  );
});
