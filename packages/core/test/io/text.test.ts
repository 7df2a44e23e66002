import { describe, expect, it } from 'vitest';
import { Context } from '../../src/context/context.js';
import { InvalidArgument } from '../../src/errors/index.js';
import { descriptorFromSpec } from '../../src/io/descriptor.js';
import { Text } from '../../src/io/descriptors/text.js';
import { applyResponseContext } from '../../src/runtime/response-context.js';
import { sseEvent } from '../../src/wire/sse/event.js';
import { expectClientError, header, request, text } from './helpers.js';

async function chunks(body: unknown): Promise<string[]> {
  const out: string[] = [];
  for await (const c of body as AsyncIterable<Uint8Array>) out.push(Buffer.from(c).toString('utf8'));
  return out;
}

describe('Text (docs/spec/io-descriptors.md §6)', () => {
  it('case 54: input is the body whatever the Content-Type; output text/plain; charset=utf-8', async () => {
    const d = new Text();
    const input = await d.fromHttpRequest(request('Bob', 'application/json'));
    const res = await d.toHttpResponse(`yo ${input}`, null);
    expect(header(res, 'content-type')).toBe('text/plain; charset=utf-8');
    expect(header(res, 'content-length')).toBeUndefined();
    expect(await text(res)).toBe('yo Bob');
  });

  it('empty body → ""', async () => {
    expect(await new Text().fromHttpRequest(request(''))).toBe('');
  });

  it('case 55 (docs/spec/io-descriptors.md D1): invalid UTF-8 → 400 naming the offset', async () => {
    await expectClientError(
      () => new Text().fromHttpRequest(request(Buffer.from([0x61, 0xe9]))),
      400,
      'Text input is not valid UTF-8 (invalid byte at offset 1)',
    );
  });

  it('a leading UTF-8 BOM is dropped; a BOM later in the text is kept', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const body = Buffer.concat([bom, Buffer.from('hi'), bom]);
    expect(await new Text().fromHttpRequest(request(body))).toBe('hi\ufeff');
  });

  it('case 53: an async generator streams chunk by chunk', async () => {
    async function* gen() {
      for (let i = 0; i < 10; i++) yield `yo ${i}`;
    }
    const res = await new Text().toHttpResponse(gen(), null);
    expect(res.body).not.toBeInstanceOf(Uint8Array);
    expect(await chunks(res.body)).toEqual(Array.from({ length: 10 }, (_, i) => `yo ${i}`));
  });

  it('sync iterables and byte chunks stream too', async () => {
    const res = await new Text().toHttpResponse(['a', Buffer.from('é')], null);
    expect(await chunks(res.body)).toEqual(['a', 'é']);
  });

  it('a string is a single chunk', async () => {
    expect(await chunks((await new Text().toHttpResponse('hello é', null)).body)).toEqual(['hello é']);
  });

  it('a non-text result fails before streaming; a bad chunk fails mid-stream', async () => {
    await expectClientError(
      () => new Text().toHttpResponse(5 as unknown as string, null),
      500,
      /Text output expects/,
    );
    const res = await new Text().toHttpResponse([1 as unknown as string], null);
    await expect(chunks(res.body)).rejects.toThrow(/chunks must be strings or bytes/);
  });

  it('case 51: ctx status applies (400 with body yes)', async () => {
    const ctx = new Context(request(''), {});
    ctx.response.status = 400;
    const res = applyResponseContext(await new Text().toHttpResponse('yes', ctx), ctx);
    expect(res.status).toBe(400);
    expect(header(res, 'content-type')).toBe('text/plain; charset=utf-8');
    expect(await text(res)).toBe('yes');
  });

  it('text/event-stream with sseEvent framing', async () => {
    const d = new Text({ content_type: 'text/event-stream' });
    expect(d.mimeType).toBe('text/event-stream');
    async function* events() {
      yield sseEvent({ data: 'one' });
      yield sseEvent({ data: 'a\nb', event: 'update', id: 7, retry: 1000 });
    }
    const res = await d.toHttpResponse(events(), null);
    expect(header(res, 'content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await text(res)).toBe('data: one\n\nevent: update\nid: 7\nretry: 1000\ndata: a\ndata: b\n\n');
  });

  it('sseEvent rejects newlines in event names and writes objects as JSON', () => {
    expect(() => sseEvent({ data: 'x', event: 'a\nb' })).toThrow(InvalidArgument);
    expect(sseEvent({ data: { a: 1 } })).toBe('data: {"a":1}\n\n');
  });

  it('fromSample, OpenAPI (docs/spec/io-descriptors.md D13: no "None") and spec', () => {
    expect(Text.fromSample(Buffer.from('héllo')).sample).toBe('héllo');
    const d = Text.fromSample('hi');
    expect(d.openapiSchema()).toEqual({ type: 'string' });
    expect(d.openapiRequestBody().content['text/plain']).toEqual({
      schema: { type: 'string' },
      example: 'hi',
    });
    expect(new Text().openapiRequestBody().content['text/plain']).toEqual({
      schema: { type: 'string' },
      example: 'Hello, world',
    });
    expect(new Text().openapiResponses().description).toBe('Successful Response');
    expect(new Text({ content_type: 'text/event-stream' }).toSpec()).toEqual({ id: 'tiffin.io.Text' });
    expect(descriptorFromSpec({ id: 'tiffin.io.Text' })).toBeInstanceOf(Text);
  });

  it('gRPC: StringValue and bytes in, StringValue out (streams collected)', async () => {
    const d = new Text();
    expect(await d.fromProto({ value: 'abc' })).toBe('abc');
    expect(await d.fromProto(Buffer.from('é'))).toBe('é');
    await expectClientError(d.fromProto(Buffer.from([0xff])), 400, /UTF-8/);
    expect(await d.toProto(['a', 'b'])).toEqual({ value: 'ab' });
  });
});
