import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Context } from '../../src/context/context.js';
import { InvalidArgument } from '../../src/errors/index.js';
import { readResponseBody } from '../../src/http/response.js';
import { descriptorFromSpec } from '../../src/io/descriptor.js';
import { File } from '../../src/io/descriptors/file.js';
import { applyResponseContext } from '../../src/runtime/response-context.js';
import { expectClientError, header, multipart, request } from './helpers.js';

const BIN = Buffer.from([0x81, 0x30, 0x89, 0x39]);

describe('File (docs/spec/io-descriptors.md §8)', () => {
  it('kind other than binaryio is InvalidArgument', () => {
    expect(() => new File({ kind: 'textio' as 'binaryio' })).toThrow(InvalidArgument);
  });

  it('case 33: raw body in, application/octet-stream out', async () => {
    const d = new File();
    const input = await d.fromHttpRequest(request(BIN, 'application/octet-stream'));
    expect(input.bytes.equals(BIN)).toBe(true);
    expect(input.contentType).toBe('application/octet-stream');
    const res = await d.toHttpResponse(input.bytes, null);
    expect(res.headers).toEqual([
      ['content-type', 'application/octet-stream'],
      ['content-length', '4'],
    ]);
    expect((await readResponseBody(res)).equals(BIN)).toBe(true);
  });

  it('case 34: a multipart file part', async () => {
    const body = multipart('bnd', [
      { name: 'note', value: 'skip me' },
      { name: 'file', value: BIN, filename: 'file.bin', type: 'application/octet-stream' },
    ]);
    const input = await new File().fromHttpRequest(request(body, 'multipart/form-data; boundary=bnd'));
    expect(input.bytes.equals(BIN)).toBe(true);
    expect(input.filename).toBe('file.bin');
  });

  it('case 35: any type is accepted when mime_type is unset; output stays octet-stream', async () => {
    const d = new File();
    const input = await d.fromHttpRequest(request(BIN, 'application/pdf'));
    expect(input.contentType).toBe('application/pdf');
    expect(header(await d.toHttpResponse(input, null), 'content-type')).toBe('application/octet-stream');
  });

  it('case 36 (docs/spec/io-descriptors.md D1): no Content-Type → 400', async () => {
    await expectClientError(new File().fromHttpRequest(request(BIN)), 400, /requires a Content-Type header/);
  });

  it('case 37 (docs/spec/io-descriptors.md D1): a wrong Content-Type → 400', async () => {
    await expectClientError(
      new File({ mime_type: 'application/pdf' }).fromHttpRequest(request(BIN, 'application/octet-stream')),
      400,
      "File should have Content-Type 'application/pdf' or 'multipart/form-data', got application/octet-stream instead",
    );
  });

  it('case 38: the matching type, compared as a media type (docs/spec/io-descriptors.md D2)', async () => {
    const d = new File({ mime_type: 'application/pdf' });
    const input = await d.fromHttpRequest(request(BIN, 'Application/PDF; x=1'));
    const res = await d.toHttpResponse(input.bytes, null);
    expect(header(res, 'content-type')).toBe('application/pdf');
  });

  it('multipart: no file part, or none of the right type → 400', async () => {
    const onlyField = multipart('b', [{ name: 'x', value: 'y' }]);
    await expectClientError(
      new File().fromHttpRequest(request(onlyField, 'multipart/form-data; boundary=b')),
      400,
      'no File found in multipart form',
    );
    const txt = multipart('b', [{ name: 'f', value: 'hi', filename: 'a.txt', type: 'text/plain' }]);
    await expectClientError(
      new File({ mime_type: 'application/pdf' }).fromHttpRequest(
        request(txt, 'multipart/form-data; boundary=b'),
      ),
      400,
      "The File IO descriptor requires input to be of Content-Type 'application/pdf', got files with content types text/plain",
    );
    await expectClientError(
      new File().fromHttpRequest(request('garbage', 'multipart/form-data; boundary=b')),
      400,
    );
  });

  it('docs/spec/io-descriptors.md D11: with ctx the content type is kept, after ctx headers', async () => {
    const ctx = new Context(request(''), {});
    ctx.response.headers.set('x-c', '3');
    const res = applyResponseContext(await new File({ mime_type: 'text/csv' }).toHttpResponse(BIN, ctx), ctx);
    expect(res.headers).toEqual([
      ['x-c', '3'],
      ['content-type', 'text/csv'],
      ['content-length', '4'],
    ]);
    ctx.response.headers.set('content-type', 'image/png');
    expect(header(applyResponseContext(await new File().toHttpResponse(BIN, ctx), ctx), 'content-type')).toBe(
      'image/png',
    );
  });

  it('output accepts Uint8Array, Readable, async iterables and Blob; rejects strings', async () => {
    const d = new File();
    async function* gen() {
      yield BIN.subarray(0, 2);
      yield BIN.subarray(2);
    }
    for (const v of [new Uint8Array(BIN), Readable.from([BIN]), gen(), new Blob([BIN])]) {
      expect((await readResponseBody(await d.toHttpResponse(v, null))).equals(BIN)).toBe(true);
    }
    await expectClientError(d.toHttpResponse('text' as unknown as Buffer, null), 500, /File output expects/);
  });

  it('fromSample guesses the type from a path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiffin-file-'));
    const p = join(dir, 'doc.pdf');
    writeFileSync(p, BIN);
    const d = File.fromSample(p);
    expect(d.mime_type).toBe('application/pdf');
    expect((d.sample as Buffer).equals(BIN)).toBe(true);
    expect(File.fromSample(p, { mime_type: 'application/x-custom' }).mime_type).toBe('application/x-custom');
    expect(() => File.fromSample(join(dir, 'missing.bin'))).toThrow(/ENOENT/);
  });

  it('OpenAPI (docs/spec/io-descriptors.md D13) and spec', () => {
    const any = new File();
    expect(any.openapiSchema()).toEqual({ type: 'string', format: 'binary' });
    expect(Object.keys(any.openapiRequestBody().content)).toEqual(['*/*']);
    const pdf = new File({ mime_type: 'application/pdf' });
    expect(Object.keys(pdf.openapiRequestBody().content)).toEqual(['application/pdf']);
    expect(Object.keys(pdf.openapiResponses().content)).toEqual(['application/pdf']);
    expect(pdf.toSpec()).toEqual({
      id: 'tiffin.io.File',
      args: { kind: 'binaryio', mime_type: 'application/pdf' },
    });
    expect((descriptorFromSpec(pdf.toSpec()) as File).mime_type).toBe('application/pdf');
    expect(() => File.fromSpec({ id: 'tiffin.io.File' })).toThrow(/^Missing args key in File spec/);
  });

  it('gRPC (11.3, docs/spec/io-descriptors.md D14)', async () => {
    const pdf = new File({ mime_type: 'application/pdf' });
    expect((await pdf.fromProto({ kind: 'application/pdf', content: BIN })).bytes.equals(BIN)).toBe(true);
    // docs/spec/io-descriptors.md D14: an unset kind is accepted.
    expect((await pdf.fromProto({ content: BIN })).bytes.equals(BIN)).toBe(true);
    await expectClientError(
      pdf.fromProto({ kind: 'image/png', content: BIN }),
      400,
      "MIME type from 'kind' is 'image/png', while 'File' is expecting 'application/pdf'",
    );
    await expectClientError(pdf.fromProto({ kind: 'application/pdf' }), 400, 'Content is empty!');
    expect((await new File().fromProto(BIN)).bytes.equals(BIN)).toBe(true);
    // docs/spec/io-descriptors.md D14: the default kind is spelt correctly.
    expect(await new File().toProto(BIN)).toEqual({ kind: 'application/octet-stream', content: BIN });
    expect((await pdf.toProto(BIN)).kind).toBe('application/pdf');
  });
});
