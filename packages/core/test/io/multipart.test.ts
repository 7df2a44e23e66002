import { describe, expect, it } from 'vitest';
import { Context } from '../../src/context/context.js';
import { InvalidArgument } from '../../src/errors/index.js';
import type { HttpRequest } from '../../src/http/request.js';
import { buildResponse, type HttpResponse } from '../../src/http/response.js';
import { descriptorFromSpec, IODescriptor } from '../../src/io/descriptor.js';
import { File } from '../../src/io/descriptors/file.js';
import { JSON as JSONDescriptor } from '../../src/io/descriptors/json.js';
import { Multipart } from '../../src/io/descriptors/multipart.js';
import { NumpyNdarray } from '../../src/io/descriptors/numpy-ndarray.js';
import { Text } from '../../src/io/descriptors/text.js';
import { NDArray } from '../../src/ndarray/index.js';
import { applyResponseContext } from '../../src/runtime/response-context.js';
import { expectClientError, header, multipart, request, text } from './helpers.js';

/** An image-like child: reads its part's bytes and content type; writes a content-disposition, as Image does. */
class FakeImage extends IODescriptor<{ type: string | null; bytes: Buffer }, Buffer> {
  readonly protoFields = ['file'] as const;
  get mimeType() {
    return 'image/jpeg';
  }
  async fromHttpRequest(req: HttpRequest) {
    return { type: req.headers.get('content-type'), bytes: await req.body() };
  }
  async toHttpResponse(value: Buffer, _ctx: Context | null): Promise<HttpResponse> {
    return buildResponse({
      body: value,
      headers: [['content-disposition', 'attachment; filename="output.jpeg"']],
      mediaType: 'image/jpeg',
    });
  }
  override openapiSchema() {
    return { type: 'string', format: 'binary' };
  }
  override openapiComponents() {
    return null;
  }
  override openapiExample() {
    return null;
  }
}

const mixedIn = () => new Multipart({ a: new JSONDescriptor(), b: new Text(), c: new NumpyNdarray() });
const mixedOut = () => new Multipart({ x: new JSONDescriptor(), y: new Text(), z: new NumpyNdarray() });

describe('Multipart construction', () => {
  it('nested Multipart → InvalidArgument', () => {
    expect(() => new Multipart({ inner: new Multipart({ a: new Text() }) })).toThrow(
      'Multipart IO can not contain nested Multipart IO descriptor',
    );
    expect(() => new Multipart({ a: 5 as unknown as Text })).toThrow(InvalidArgument);
  });
  it('displayName lists children in order', () => {
    expect(mixedIn().displayName).toBe('Multipart(a=JSON,b=Text,c=NumpyNdarray)');
  });
  it('fromSample is not supported', () => {
    expect(() => Multipart.fromSample({})).toThrow("'fromSample' is not supported for Multipart.");
  });
});

describe('Multipart fromHttpRequest (9.2)', () => {
  it('case 48: plain fields feed JSON, Text and NumpyNdarray children', async () => {
    const body = multipart('XyZ', [
      { name: 'a', value: '{"k": [1, 2]}' },
      { name: 'b', value: 'hello é' },
      { name: 'c', value: '[[1,2],[3,4]]' },
    ]);
    const value = await mixedIn().fromHttpRequest(request(body, 'multipart/form-data; boundary=XyZ'));
    expect(value.a).toEqual({ k: [1, 2] });
    expect(value.b).toBe('hello é');
    expect((value.c as NDArray).toArray()).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('case 46: file parts carry their own content type to the child', async () => {
    const d = new Multipart({ original: new FakeImage(), compared: new FakeImage() });
    const body = multipart('b', [
      { name: 'original', value: 'AAA', filename: 'a.bmp', type: 'image/bmp' },
      { name: 'compared', value: 'BBB', filename: 'b.bmp', type: 'image/bmp' },
    ]);
    const v = (await d.fromHttpRequest(request(body, 'multipart/form-data; boundary=b'))) as Record<
      string,
      { type: string; bytes: Buffer }
    >;
    expect(v.original!.type).toBe('image/bmp');
    expect(v.original!.bytes.toString()).toBe('AAA');
    expect(v.compared!.bytes.toString()).toBe('BBB');
  });

  it('case 47 (docs/spec/io-descriptors.md D12): wrong part names → 400 listing expected and received', async () => {
    const d = new Multipart({ original: new FakeImage(), compared: new FakeImage() });
    const body = multipart('b', [
      { name: 'x1', value: 'A', filename: 'a.bmp', type: 'image/bmp' },
      { name: 'x2', value: 'B', filename: 'b.bmp', type: 'image/bmp' },
    ]);
    const err = await expectClientError(
      d.fromHttpRequest(request(body, 'multipart/form-data; boundary=b')),
      400,
      "Multipart input is missing part(s) 'original', 'compared': expected parts original, compared; received x1, x2",
    );
    expect(err.detail).toEqual({
      expected: ['original', 'compared'],
      received: ['x1', 'x2'],
      missing: ['original', 'compared'],
    });
  });

  it('case 49 (docs/spec/io-descriptors.md D1): not multipart/form-data → 400; missing Content-Type → 400', async () => {
    await expectClientError(
      mixedIn().fromHttpRequest(request('{}', 'application/json')),
      400,
      'Multipart only accepts `multipart/form-data` as Content-Type header, got application/json instead.',
    );
    await expectClientError(mixedIn().fromHttpRequest(request('{}', 'multipart/mixed; boundary=a')), 400);
    await expectClientError(mixedIn().fromHttpRequest(request('x')), 400, /requires a Content-Type/);
  });

  it('case 50 (docs/spec/io-descriptors.md D1): a garbage body → 400', async () => {
    await expectClientError(
      mixedIn().fromHttpRequest(request('garbage', 'multipart/form-data; boundary=XyZ')),
      400,
    );
    await expectClientError(
      mixedIn().fromHttpRequest(request('garbage', 'multipart/form-data')),
      400,
      /boundary/,
    );
  });

  it('the first child error (declaration order) wins, as the child reports it', async () => {
    const body = multipart('b', [
      { name: 'a', value: 'not json' },
      { name: 'b', value: 'ok' },
      { name: 'c', value: '[[1],[2,3]]' },
    ]);
    await expectClientError(
      mixedIn().fromHttpRequest(request(body, 'multipart/form-data; boundary=b')),
      400,
      /^Invalid JSON input received: /,
    );
  });

  it('duplicate names: the last value wins; extra parts are ignored', async () => {
    const d = new Multipart({ a: new Text() });
    const body = multipart('b', [
      { name: 'a', value: 'first' },
      { name: 'extra', value: 'x' },
      { name: 'a', value: 'last' },
    ]);
    expect(await d.fromHttpRequest(request(body, 'multipart/form-data; boundary=b'))).toEqual({ a: 'last' });
  });

  it('a File child on a file part without a Content-Type takes the form branch', async () => {
    const d = new Multipart({ f: new File() });
    const body = multipart('b', [{ name: 'f', value: 'DATA', filename: 'x.bin' }]);
    const v = await d.fromHttpRequest(request(body, 'multipart/form-data; boundary=b'));
    expect((v.f as { bytes: Buffer }).bytes.toString()).toBe('DATA');
  });
});

describe('Multipart toHttpResponse (9.3)', () => {
  it('case 48: the body layout of the spec example', async () => {
    const res = await mixedOut().toHttpResponse(
      {
        x: { k: [1, 2] },
        y: 'hello é',
        z: NDArray.from([
          [1, 2],
          [3, 4],
        ]),
      },
      null,
    );
    const ct = header(res, 'content-type')!;
    const m = /^multipart\/form-data; boundary=([0-9a-f]{32})$/.exec(ct);
    expect(m).not.toBeNull();
    const b = m![1];
    expect(await text(res)).toBe(
      `--${b}\r\nContent-Disposition: form-data; name="x"\r\ncontent-length: 11\r\ncontent-type: application/json\r\n\r\n{"k":[1,2]}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="y"\r\ncontent-type: text/plain; charset=utf-8\r\n\r\nhello é\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="z"\r\ncontent-length: 13\r\ncontent-type: application/json\r\n\r\n[[1,2],[3,4]]\r\n` +
        `--${b}--\r\n`,
    );
    expect(res.status).toBe(200);
  });

  it('boundaries are fresh per response', async () => {
    const d = new Multipart({ t: new Text() });
    const a = header(await d.toHttpResponse({ t: 'a' }, null), 'content-type');
    const c = header(await d.toHttpResponse({ t: 'a' }, null), 'content-type');
    expect(a).not.toBe(c);
  });

  it('case 46: image children put their filename in the Content-Disposition line', async () => {
    const d = new Multipart({ img1: new FakeImage(), img2: new FakeImage() });
    const res = await d.toHttpResponse({ img1: Buffer.from('J1'), img2: Buffer.from('J2') }, null);
    const body = await text(res);
    expect(body).toContain(
      'Content-Disposition: form-data; name="img1"; filename="output.jpeg"\r\ncontent-length: 2\r\ncontent-type: image/jpeg\r\n\r\nJ1\r\n',
    );
    expect(body).toContain('name="img2"; filename="output.jpeg"');
    expect(body).not.toContain('attachment');
  });

  it('a missing field in the result is a server error; extra keys are ignored', async () => {
    await expectClientError(
      mixedOut().toHttpResponse({ x: 1, y: 'a' } as never, null),
      500,
      /missing field\(s\) z/,
    );
    const res = await new Multipart({ t: new Text() }).toHttpResponse({ t: 'a', extra: 1 } as never, null);
    expect(await text(res)).not.toContain('extra');
  });

  it('ctx status/headers/cookies apply to the outer response', async () => {
    const ctx = new Context(request(''), {});
    ctx.response.status = 207;
    ctx.response.headers.set('x-m', '1');
    const res = applyResponseContext(
      await new Multipart({ t: new Text() }).toHttpResponse({ t: 'a' }, ctx),
      ctx,
    );
    expect(res.status).toBe(207);
    expect(res.headers[0]).toEqual(['x-m', '1']);
  });
});

describe('Multipart OpenAPI, spec and gRPC', () => {
  it('schema, example, components', () => {
    const d = new Multipart({ a: JSONDescriptor.fromSample({ q: 1 }), b: new Text() });
    expect(d.openapiSchema()).toEqual({
      type: 'object',
      properties: { a: {}, b: { type: 'string' } },
    });
    expect(d.openapiExample()).toEqual({ a: { q: 1 }, b: null });
    expect(d.openapiRequestExample()).toEqual({ a: { q: 1 }, b: 'Hello, world' });
    // A part without an example (a file) leaves the whole form without one: half a form is not a valid request.
    expect(new Multipart({ a: new Text(), f: new File() }).openapiRequestExample()).toBeNull();
    expect(d.openapiComponents()).toEqual({});
    expect(Object.keys(d.openapiRequestBody().content)).toEqual(['multipart/form-data']);
    expect(Object.keys(d.openapiResponses().content)).toEqual(['multipart/form-data']);
  });

  it('toSpec / fromSpec rebuild children through the registry', () => {
    const d = new Multipart({ a: new JSONDescriptor(), f: new File({ mime_type: 'application/pdf' }) });
    const spec = d.toSpec();
    expect(spec).toEqual({
      id: 'tiffin.io.Multipart',
      args: {
        a: { id: 'tiffin.io.JSON', args: { has_pydantic_model: false, has_json_encoder: false } },
        f: { id: 'tiffin.io.File', args: { kind: 'binaryio', mime_type: 'application/pdf' } },
      },
    });
    const back = descriptorFromSpec(spec) as Multipart;
    expect(back.displayName).toBe('Multipart(a=JSON,f=File)');
    expect(() => Multipart.fromSpec({ id: 'tiffin.io.Multipart' })).toThrow(
      /^Missing args key in Multipart spec/,
    );
  });

  it('fromProto / toProto (11.3)', async () => {
    const d = new Multipart({ t: new Text(), n: new NumpyNdarray() });
    const v = await d.fromProto({
      fields: {
        t: { text: { value: 'hi' }, representation: 'text' },
        n: { ndarray: { dtype: 'DTYPE_INT32', shape: [2], int32_values: [1, 2] } },
      },
    });
    expect(v.t).toBe('hi');
    expect((v.n as NDArray).dtype).toBe('int32');
    await expectClientError(
      d.fromProto(Buffer.from('x')),
      400,
      "cannot use 'serialized_bytes' with Multipart",
    );
    await expectClientError(
      d.fromProto({ fields: { t: { text: { value: 'a' } }, n: {}, zz: {} } }),
      400,
      /accepts the following keys: t, n\. Given MultipartMessage has invalid fields: zz/,
    );
    await expectClientError(
      d.fromProto({ fields: { t: { text: { value: 'a' } } } }),
      400,
      '"field" cannot be empty.',
    );
    await expectClientError(
      d.fromProto({ fields: { t: { json: {} }, n: { ndarray: {} } } }),
      400,
      "'Text' accepts one of the following fields: 'text,serialized_bytes' got 'json' instead.",
    );
    const out = await d.toProto({ n: NDArray.from([1.5]), t: 'x' });
    expect(out.fields!.t).toEqual({ text: { value: 'x' }, representation: 'text' });
    expect(out.fields!.n!.ndarray).toEqual({ dtype: 'DTYPE_DOUBLE', shape: [1], double_values: [1.5] });
  });
});
