import {
  BadInput,
  type Batching,
  buildResponse,
  type Context,
  type HttpRequest,
  type HttpResponse,
  IODescriptor,
  NDArray,
  type ProtoField,
  type SchemaObject,
  type Tensor,
  type TensorMetadata,
  type WireTypes,
} from '@tiffin/core';

/** Rows of numbers, e.g. `[[1, 2], [3, 4]]`. */
export type Rows = number[][];

/**
 * Rows of numbers as CSV text (`1,2\n3,4`): one line per row, numbers separated by commas.
 * Input and output of an API over HTTP (`text/csv`), gRPC (the `text` field), the Open Inference Protocol
 * (one FP64 tensor of shape [rows, columns]) and `@tiffin/client` (a CSV string); batchable by rows.
 */
export class CsvRows extends IODescriptor<Rows, Rows> {
  /** The typed client sends and receives the CSV text (its wire form, from `mimeType`, is `text`). */
  declare readonly '~wire'?: WireTypes<string, string>;

  /**
   * gRPC: the oneof members read and written. The base class's gRPC side carries the HTTP body in the
   * `text` member (and reads `serialized_bytes`), so a CSV document needs no code of its own here.
   */
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

  // --- HTTP (the handler's status, headers and cookies on ctx.response are applied by the server) ---

  async fromHttpRequest(request: HttpRequest): Promise<Rows> {
    return parseCsv(new TextDecoder().decode(await request.body()));
  }

  async toHttpResponse(rows: Rows): Promise<HttpResponse> {
    return buildResponse({ body: formatCsv(rows), mediaType: this.mimeType });
  }

  // --- Open Inference Protocol (v2): rows are one FP64 tensor [rows, columns] (default: the CSV as BYTES) ---

  override tensorMetadata(name: string): TensorMetadata[] {
    return [{ name, datatype: 'FP64', shape: [-1, -1] }];
  }

  override async fromTensors(tensors: readonly Tensor[]): Promise<Rows> {
    const array = tensors.length === 1 ? tensors[0]!.array : null;
    if (array?.shape.length !== 2 || array.shape[0] === 0) {
      throw new BadInput('CsvRows: one tensor of shape [rows, columns] with at least one row');
    }
    const rows = array.toArray() as unknown[][];
    for (const row of rows) {
      if (!row.every((v) => typeof v === 'number' && Number.isFinite(v))) {
        throw new BadInput('CsvRows: every element must be a finite number');
      }
    }
    return rows as Rows;
  }

  override async toTensors(rows: Rows, _ctx: Context, name: string): Promise<Tensor[]> {
    return [{ name, array: NDArray.from(rows, 'float64') }];
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
