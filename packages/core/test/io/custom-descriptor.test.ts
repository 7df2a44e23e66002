import { describe, expect, it } from 'vitest';
// The README's "Writing your own descriptor" example, verbatim (imports from the package entry).
import {
  BadInput,
  buildResponse,
  type Context,
  type HttpRequest,
  type HttpResponse,
  IODescriptor,
  type ProtoField,
  type SchemaObject,
} from '../../src/index.js';
import { request, text } from './helpers.js';

/** One CSV row: `text/csv` body "a,b,c" in, string[] out and back. */
class CsvRow extends IODescriptor<string[], string[]> {
  readonly protoFields: readonly ProtoField[] = ['text'];

  get mimeType(): string {
    return 'text/csv';
  }

  async fromHttpRequest(req: HttpRequest): Promise<string[]> {
    if (req.contentType?.essence !== 'text/csv') {
      throw new BadInput(
        `CsvRow expects Content-Type text/csv, got ${req.headers.get('content-type') ?? '(none)'}`,
      );
    }
    const line = (await req.body()).toString('utf8').trim();
    if (line.includes('\n')) throw new BadInput('CsvRow expects exactly one line');
    return line.split(',');
  }

  async toHttpResponse(row: string[], ctx: Context | null): Promise<HttpResponse> {
    return buildResponse({
      body: `${row.join(',')}\n`,
      mediaType: 'text/csv',
      status: ctx?.response.status,
      headers: ctx?.response.headerList(),
      cookies: ctx?.response.cookies,
    });
  }

  override openapiSchema(): SchemaObject {
    return { type: 'string', example: 'a,b,c' };
  }
  override openapiComponents() {
    return null;
  }
  override openapiExample() {
    return null;
  }
  override openapiRequestBody() {
    return this.buildRequestBody();
  }
  override openapiResponses() {
    return this.buildResponses();
  }
}

describe('custom descriptor from the README', () => {
  it('parses and writes a CSV row', async () => {
    const d = new CsvRow();
    const row = await d.fromHttpRequest(request('1,2,3\n', 'text/csv; charset=utf-8'));
    expect(row).toEqual(['1', '2', '3']);
    const res = await d.toHttpResponse(row.reverse(), null);
    expect(await text(res)).toBe('3,2,1\n');
    expect(res.headers).toContainEqual(['content-type', 'text/csv; charset=utf-8']);
  });
  it('rejects other content types and several lines with 400', async () => {
    const d = new CsvRow();
    await expect(d.fromHttpRequest(request('1,2', 'application/json'))).rejects.toThrow(BadInput);
    await expect(d.fromHttpRequest(request('1\n2', 'text/csv'))).rejects.toThrow('exactly one line');
  });
  it('OpenAPI hooks via the base helpers; no spec (unregistered)', () => {
    const d = new CsvRow();
    expect(d.openapiRequestBody().content['text/csv']).toEqual({
      schema: { type: 'string', example: 'a,b,c' },
    });
    expect(d.toSpec()).toBeNull();
    expect(d.displayName).toBe('CsvRow');
  });
});
