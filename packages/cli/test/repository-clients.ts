import { writeFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { inferenceV2ProtoPath } from '@tiffin/core';
import { DataType, encodeModel } from '@tiffin/onnx';
import { expect } from 'vitest';
import { postJson } from './model-servers.js';

/** Clients of a model repository served by `tiffin serve DIR` (docs/model-repository.md): its index, calls, gRPC. */

/** `scale`: y[b, 2] = x[b, 2] · k, so a rewritten file answers differently with the same signature. */
export function writeScale(path: string, k: number): void {
  const bytes = new Uint8Array(Float32Array.of(k).buffer);
  writeFileSync(
    path,
    encodeModel({
      opsets: { '': 17 },
      graph: {
        name: 'scale',
        nodes: [{ opType: 'Mul', inputs: ['x', 'k'], outputs: ['y'] }],
        initializers: [{ name: 'k', dataType: DataType.FLOAT, dims: [], data: { kind: 'raw', bytes } }],
        inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: ['batch', 2] }],
        outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: ['batch', 2] }],
      },
    }),
  );
}

export interface IndexRow {
  name: string;
  version: string;
  state: string;
  reason: string;
}

export async function index(url: string, body?: unknown): Promise<IndexRow[]> {
  const res = await fetch(`${url}/v2/repository/index`, {
    method: 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as IndexRow[];
}

export async function rowOf(url: string, name: string): Promise<IndexRow | undefined> {
  return (await index(url)).find((r) => r.name === name);
}

/** Wait for the poll watcher to have seen a change: the index row of `name` until `ok` holds (at most ~20 s). */
export async function until(
  url: string,
  name: string,
  ok: (row: IndexRow | undefined) => boolean,
): Promise<IndexRow | undefined> {
  for (let i = 0; i < 200; i++) {
    const row = await rowOf(url, name);
    if (ok(row)) return row;
    await new Promise((r) => setTimeout(r, 100));
  }
  return rowOf(url, name);
}

export async function predict(
  url: string,
  name: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return postJson(`${url}/${name}/predict`, [[1, 2]]);
}

export async function v2(url: string, name: string) {
  return postJson(`${url}/v2/models/${name}/infer`, {
    inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 2], data: [1, 2] }],
  });
}

type Unary = (req: unknown, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;

export function v2Grpc(port: number): Record<string, (req: unknown) => Promise<unknown>> {
  const pkg = grpc.loadPackageDefinition(
    protoLoader.loadSync(inferenceV2ProtoPath(), { keepCase: true, longs: String }),
  ) as unknown as { inference: { GRPCInferenceService: grpc.ServiceClientConstructor } };
  const client = new pkg.inference.GRPCInferenceService(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  );
  const call =
    (method: string) =>
    (req: unknown): Promise<unknown> =>
      new Promise((resolve, reject) =>
        (client as unknown as Record<string, Unary>)[method]!.call(client, req, (err, res) =>
          err ? reject(err) : resolve(res),
        ),
      );
  return {
    index: call('RepositoryIndex'),
    load: call('RepositoryModelLoad'),
    unload: call('RepositoryModelUnload'),
    ready: call('ModelReady'),
    infer: call('ModelInfer'),
  };
}
