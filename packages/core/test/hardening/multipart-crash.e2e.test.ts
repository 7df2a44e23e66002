import { request as httpRequest } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  File,
  inferenceClientConstructor,
  JSON as JSONDescriptor,
  Multipart,
  type RequestMessage,
  Service,
  serveGrpc,
  Text,
} from '../../src/index.js';
import { GrpcStatus } from '../../src/internal.js';
import type { FileInput } from '../../src/io/descriptors/file.js';
import { start } from '../server/helpers.js';

/** POST raw bytes (exact headers, no client-side normalisation) and read the answer. */
function rawPost(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const svc = new Service('multipart_crash');
svc.api({ input: new File(), output: new JSONDescriptor() }, function file_name(f: FileInput) {
  return { filename: f.filename, size: f.bytes.length };
});
svc.api(
  { input: new Multipart({ doc: new File(), note: new Text() }), output: new JSONDescriptor() },
  function parts(p) {
    return { filename: p.doc.filename, note: p.note };
  },
);

let handle: Awaited<ReturnType<typeof start>>;
beforeAll(async () => {
  handle = await start(svc);
});
afterAll(async () => {
  await handle.close();
});

const alive = async () => {
  const res = await fetch(`${handle.url}/livez`);
  expect(res.status).toBe(200);
};

const form = (boundary: string, head: string, content = 'a,b\n1,2\n') =>
  Buffer.concat([
    Buffer.from(`--${boundary}\r\n${head}\r\nContent-Type: text/csv\r\n\r\n`, 'utf8'),
    Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);

describe('multipart bodies that once crashed the server', () => {
  it('keeps an RFC 5987 file name outside Latin-1 as a UTF-8 string', async () => {
    const body = form('xx', `Content-Disposition: form-data; name="f"; filename*=UTF-8''%E2%82%AC.csv`);
    const res = await rawPost(
      handle.url,
      '/file_name',
      { 'content-type': 'multipart/form-data; boundary=xx' },
      body,
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ filename: '€.csv', size: 8 });
    await alive();
  });

  it('keeps a raw UTF-8 file name (RFC 7578) as a UTF-8 string', async () => {
    const body = form('xx', 'Content-Disposition: form-data; name="f"; filename="€ 日本.png"');
    const res = await rawPost(
      handle.url,
      '/file_name',
      { 'content-type': 'multipart/form-data; boundary=xx' },
      body,
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).filename).toBe('€ 日本.png');
    await alive();
  });

  it('passes a non-Latin-1 file part through Multipart to its child', async () => {
    const boundary = 'yy';
    const body = Buffer.concat([
      form(boundary, 'Content-Disposition: form-data; name="doc"; filename="€.csv"').subarray(
        0,
        -`--${boundary}--\r\n`.length,
      ),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhé\r\n--${boundary}--\r\n`,
      ),
    ]);
    const res = await rawPost(
      handle.url,
      '/parts',
      { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ note: 'hé' });
  });

  it('answers an unterminated multipart body with a file part with 400', async () => {
    const body = Buffer.from(
      '--xx\r\nContent-Disposition: form-data; name="f"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nsome bytes',
    );
    for (const path of ['/file_name', '/parts']) {
      const res = await rawPost(
        handle.url,
        path,
        { 'content-type': 'multipart/form-data; boundary=xx' },
        body,
      );
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ type: 'BadInput' });
      expect(res.body).toMatch(/Unexpected end of/);
    }
    await alive();
  });

  it('answers a part header block that never ends with 400', async () => {
    const body = Buffer.from(
      `--xx\r\nContent-Disposition: form-data; name="f"; filename="a"\r\nX: ${'a'.repeat(20000)}`,
    );
    const res = await rawPost(
      handle.url,
      '/file_name',
      { 'content-type': 'multipart/form-data; boundary=xx' },
      body,
    );
    expect(res.status).toBe(400);
    await alive();
  });
});

describe('multipart over gRPC', () => {
  it('answers a message whose parts fail at once and later with INVALID_ARGUMENT, leaving no rejection behind', async () => {
    // Found by `pnpm fuzz`: the JSON part's rejection was started before the empty File part threw, and was
    // never handled (an unhandledRejection that ended the process).
    const mp = new Service('multipart_grpc');
    mp.api(
      {
        name: 'mixed',
        input: new Multipart({ meta: new JSONDescriptor(), doc: new File(), note: new Text() }),
        output: new JSONDescriptor(),
      },
      () => 1,
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const rpc = await serveGrpc(mp, { port: 0, reflection: false, log: () => {} });
    const Client = inferenceClientConstructor();
    const client = new Client(rpc.address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      Call(req: RequestMessage, cb: (err: grpc.ServiceError | null) => void): void;
    };
    try {
      for (const fields of [
        { meta: { serialized_bytes: Buffer.alloc(0) } },
        {
          meta: { serialized_bytes: Buffer.from('{') },
          doc: {},
          note: { serialized_bytes: Buffer.from([0xff]) },
        },
      ]) {
        const err = await new Promise<grpc.ServiceError | null>((resolve) =>
          client.Call({ api_name: 'mixed', multipart: { fields } } as unknown as RequestMessage, resolve),
        );
        expect(err?.code, err?.details).toBe(GrpcStatus.INVALID_ARGUMENT);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      client.close();
      await rpc.close();
    }
  });
});
