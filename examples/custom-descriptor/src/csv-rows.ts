import {
  BadInput,
  type Batching,
  buildResponse,
  type Context,
  type HttpRequest,
  type HttpResponse,
  IODescriptor,
  type ProtoField,
  type ProtoPayload,
  type SchemaObject,
  type StringValueMessage,
} from '@tiffin/core';

/** Rows of numbers, e.g. `[[1, 2], [3, 4]]`. */
export type Rows = number[][];

/**
 * Rows of numbers as CSV text (`1,2\n3,4`): one line per row, numbers separated by commas.
 * Input and output of an API, over HTTP (`text/csv`) and gRPC (the `text` field), batchable by rows.
 */
export class CsvRows extends IODescriptor<Rows, Rows> {
  /** gRPC: the oneof members read and written (a CSV document travels as text). */
  readonly protoFields: readonly ProtoField[] = ['text'];

  /** Batching: a request of k lines counts as k rows; a batch is all rows, split back by count. */
  override readonly batching: Batching<Rows, Rows, Rows, Rows> = {
    rows: (rows) => rows.length,
    merge: (items) => items.flat(1),
    batchRows: (batch) => batch.length,
    split: (batch, counts) => {
      let at = 0;
      return counts.map((n) => {
        at += n;
        return batch.slice(at - n, at);
      });
    },
  };

  get mimeType(): string {
    return 'text/csv';
  }

  // --- HTTP ---

  async fromHttpRequest(request: HttpRequest): Promise<Rows> {
    return parseCsv(new TextDecoder().decode(await request.body()));
  }

  async toHttpResponse(rows: Rows, ctx: Context | null): Promise<HttpResponse> {
    // The handler's status, headers and cookies (ctx.response) apply to the response.
    return buildResponse({
      body: formatCsv(rows),
      mediaType: this.mimeType,
      status: ctx?.response.status,
      headers: ctx?.response.headerList(),
      cookies: ctx?.response.cookies,
    });
  }

  // --- gRPC ---

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<Rows> {
    const text =
      message instanceof Uint8Array
        ? new TextDecoder().decode(message)
        : (message as StringValueMessage).value;
    return parseCsv(text ?? '');
  }

  override async toProto(rows: Rows): Promise<StringValueMessage> {
    return { value: formatCsv(rows) };
  }

  // --- OpenAPI: the schema and an example; the request body and responses are derived from them ---

  override openapiSchema(): SchemaObject {
    return { type: 'string', description: 'Rows of comma-separated numbers, one per line' };
  }

  override openapiExample(): string {
    return '5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3';
  }
}

/** Parse CSV rows; anything that is not a number is the client's mistake (400), never a 500. */
function parseCsv(text: string): Rows {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  if (lines.length === 0) throw new BadInput('CsvRows: the body holds no rows');
  return lines.map((line, i) =>
    line.split(',').map((cell, j) => {
      const value = Number(cell);
      if (cell.trim() === '' || !Number.isFinite(value)) {
        throw new BadInput(`CsvRows: row ${i + 1}, column ${j + 1} is not a number`);
      }
      return value;
    }),
  );
}

function formatCsv(rows: Rows): string {
  return rows.map((row) => row.join(',')).join('\n');
}
