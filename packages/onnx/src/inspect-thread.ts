import { Worker } from 'node:worker_threads';
import {
  applySignatureOverrides,
  InvalidArgument,
  type SignatureOverrides,
  siblingModule,
  workerStart,
} from '@tiffin/core/internal';
import type { OnnxSignature } from './runtime/onnx-signature.js';

type Answer = { id: number } & ({ read: OnnxSignature } | { error: string; code?: unknown });
type Pending = { resolve: (a: Answer) => void; reject: (e: Error) => void };

/** The one signature reader of the process: started on first use, never keeping the process alive. */
let reader: { worker: Worker; pending: Map<number, Pending> } | undefined;
let nextId = 0;

function startReader(): NonNullable<typeof reader> {
  const entry = siblingModule(import.meta.url, 'inspect-worker');
  const { file, execArgv } = workerStart(entry);
  const worker = new Worker(file, { workerData: { entry: entry.href }, execArgv });
  worker.unref();
  const started = { worker, pending: new Map<number, Pending>() };
  const fail = (err: Error) => {
    if (reader === started) reader = undefined;
    for (const p of started.pending.values()) p.reject(err);
    started.pending.clear();
  };
  worker.on('message', (answer: Answer) => {
    started.pending.get(answer.id)?.resolve(answer);
    started.pending.delete(answer.id);
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the signature reader exited (code ${code})`)));
  return started;
}

/**
 * `inspectOnnx` in a worker thread (`LoadFrameworkModelOptions.inspectOffThread`): the same signature, the
 * same ONNX_MODEL_INVALID for a file ONNX Runtime cannot load. A reader that dies (a runtime crash on a hostile
 * file) fails the reads in flight and is started again by the next.
 */
export async function inspectOnnxOffThread(
  path: string,
  overrides: SignatureOverrides | undefined,
): Promise<OnnxSignature> {
  reader ??= startReader();
  const { worker, pending } = reader;
  const id = nextId++;
  const answer = await new Promise<Answer>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, path });
  });
  if ('error' in answer)
    throw new InvalidArgument(answer.error, {
      code: typeof answer.code === 'string' ? answer.code : 'ONNX_MODEL_INVALID',
    });
  return { ...answer.read, signature: applySignatureOverrides(answer.read.signature, overrides) };
}
