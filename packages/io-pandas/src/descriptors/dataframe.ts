import { existsSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import {
  BadInput,
  type Batching,
  buildResponse,
  type Context,
  DEFAULT_LIMITS,
  type HttpRequest,
  type HttpResponse,
  InvalidArgument,
  IODescriptor,
  type ProtoPayload,
  type SchemaObject,
  type Tensor,
  type TensorMetadata,
  type WireForm,
  type WireTypes,
} from '@tiffin/core';
import {
  bodyRequest,
  type DataFrameMessage,
  type DescriptorSpec,
  type Limits,
  type RequestBodyObject,
  type ResponseObject,
  type TableRow,
} from '@tiffin/core/descriptor';
import { frameView, isDataFrame, tableToDanfo, tableToDanfoInSlices } from '../danfo/convert.js';
import { type DataFrame, loadDanfo } from '../danfo/load.js';
import { frameToCsv } from '../formats/csv.js';
import { decodeTableOffThread, prepareTables } from '../formats/decode-off-thread.js';
import { decodeTable, type TableDecoding } from '../formats/decode-table.js';
import { checkFormat, FORMATS, type Format, requestFormat } from '../formats/format.js';
import { frameToJson } from '../formats/json-write.js';
import { frameToParquet } from '../formats/parquet.js';
import { dataFrameFromMessage, dataFrameToMessage } from '../grpc/dataframe.js';
import { exampleFrame } from '../openapi/example.js';
import { frameSchema } from '../openapi/schema.js';
import { columnsFromTable, columnTensorMetadata, tableFromColumns } from '../table/column-tensors.js';
import type { Dtype } from '../table/dtype.js';
import {
  type DtypeOption,
  type ResolvedDtype,
  requireEnforceTargets,
  resolveDtype,
  resolveShape,
  shapeMatches,
} from '../table/options.js';
import { type Orient, resolveOrient } from '../table/orient.js';
import { rowCount, shapeText, type Table, typeName } from '../table/table.js';
import { requireDeclaredColumns } from '../table/type-table.js';
import type { FrameView } from '../table/view.js';
import { tableBatching } from './batching.js';
import { protoPayload } from './proto-payload.js';
import { specArgs } from './spec-args.js';

export interface PandasDataFrameOptions<F extends Format = Format> {
  /** JSON layout of requests and responses (default `records`). */
  orient?: Orient;
  /** Column names, applied to incoming data when `apply_column_names` is set. */
  columns?: string[] | null;
  apply_column_names?: boolean;
  /** true: infer column dtypes; false: no string→number inference; a name or {column: dtype} map. */
  dtype?: DtypeOption;
  /** Applies `dtype` (a name or map) to incoming data; failing casts are 400s. */
  enforce_dtype?: boolean;
  /** `[rows, columns]` with -1 wildcards, or a bare column count. */
  shape?: readonly number[] | number | null;
  enforce_shape?: boolean;
  /** Response format, and request format when the Content-Type names none (default `json`). */
  default_format?: F;
}

const OWNER = 'PandasDataFrame';

/**
 * JSON and CSV bodies under 16 KiB (a few thousand cells, well under a millisecond) are decoded on the event
 * loop; larger ones, and every Parquet file (a small one may declare 65,536 values and more), in a thread.
 */
const INLINE_BYTES = 16 * 1024;
const decodesInline = (body: Buffer, format: Format) => format !== 'parquet' && body.length < INLINE_BYTES;

/** A table on the wire (JSON in six orients, CSV or Parquet) ↔ a danfojs-node DataFrame. */
export class PandasDataFrame<F extends Format = 'json'> extends IODescriptor<DataFrame, DataFrame> {
  static override readonly descriptorId = 'tiffin.io.PandasDataFrame';
  /** Requests' rows are concatenated; each caller gets its own rows of the output back. */
  override readonly batching: Batching<DataFrame, DataFrame, DataFrame, DataFrame> =
    tableBatching<DataFrame>('PandasDataFrame');

  /**
   * Clients send row objects or a column map (sent as JSON in this descriptor's orient); they get rows
   * back for JSON output, the CSV/Parquet file as a Blob otherwise.
   */
  declare readonly '~wire'?: WireTypes<
    TableRow[] | Record<string, unknown[]>,
    F extends 'json' ? TableRow[] : Blob
  >;
  readonly protoFields = ['dataframe'] as const;
  readonly orient: Orient;
  readonly columns: string[] | null;
  readonly applyColumnNames: boolean;
  readonly dtype: ResolvedDtype;
  readonly enforceDtype: boolean;
  readonly shape: number[] | null;
  readonly enforceShape: boolean;
  readonly defaultFormat: Format;
  private sampleView: FrameView | undefined;

  constructor(options: PandasDataFrameOptions<F> = {}) {
    super();
    this.orient = resolveOrient(options.orient, OWNER);
    this.columns = options.columns ? [...options.columns] : null;
    this.applyColumnNames = options.apply_column_names ?? false;
    this.dtype = resolveDtype(options.dtype);
    this.enforceDtype = options.enforce_dtype ?? false;
    this.shape = resolveShape(options.shape, OWNER);
    this.enforceShape = options.enforce_shape ?? false;
    this.defaultFormat = checkFormat(options.default_format ?? 'json', OWNER);
    requireEnforceTargets({
      enforceDtype: this.enforceDtype,
      hasDtype: this.dtype !== null,
      enforceShape: this.enforceShape,
      hasShape: this.shape !== null,
    });
    if (this.applyColumnNames && !this.columns?.length) {
      throw new InvalidArgument("'columns' must be specified when 'apply_column_names=True'");
    }
  }

  get mimeType(): string {
    return FORMATS[this.defaultFormat];
  }

  private decoding(format: Format, limits: Readonly<Limits>): TableDecoding {
    const { maxDepth, maxElements, maxValuesPerByte } = limits;
    return {
      format,
      orient: this.orient,
      dtype: this.dtype,
      enforceDtype: this.enforceDtype,
      owner: OWNER,
      maxDepth,
      maxElements,
      maxValuesPerByte,
    };
  }

  /** Decode one body in `format` to a typed table (no danfo yet), on this thread. */
  async decode(body: Buffer, format: Format, limits: Readonly<Limits> = DEFAULT_LIMITS): Promise<Table> {
    return decodeTable(body, this.decoding(format, limits));
  }

  /** danfo and the decoding threads load at startup, not on the first body (which held `/livez` for seconds). */
  override prepare(): Promise<void> {
    return prepareTables();
  }

  async fromHttpRequest(request: HttpRequest): Promise<DataFrame> {
    const [dfd, table] = await Promise.all([
      loadDanfo(),
      request.body().then((b) => {
        const format = requestFormat(request.contentType, this.defaultFormat, b);
        const how = this.decoding(format, request.limits);
        return decodesInline(b, format) ? decodeTable(b, how) : decodeTableOffThread(b, how);
      }),
    ]);
    this.validateTable(table.columns, [rowCount(table), table.columns.length], BadInput);
    if (this.applyColumnNames) table.columns = [...this.columns!];
    requireDeclaredColumns(table.columns, this.dtype, this.enforceDtype, OWNER);
    return tableToDanfoInSlices(dfd, table, OWNER);
  }

  /** docs/spec/io-descriptors.md §3.5: column renaming and shape (dtype is not checked here). */
  private validateTable(
    columns: readonly string[],
    shape: [number, number],
    errorClass: typeof BadInput | typeof InvalidArgument,
  ): void {
    if (this.applyColumnNames && this.columns!.length !== columns.length) {
      throw new errorClass(
        `length of 'columns' (${this.columns!.length}) does not match the # of columns of incoming data (${columns.length}).`,
      );
    }
    if (this.enforceShape && this.shape && !shapeMatches(this.shape, shape)) {
      throw new errorClass(
        `${OWNER}: Expecting DataFrame of shape "${shapeText(this.shape)}", but "${shapeText(shape)}" was received.`,
      );
    }
  }

  /** The view the writers use, validated (errors here are 400s: the API returned a mismatching table). */
  outputView(value: unknown): FrameView {
    if (!isDataFrame(value)) {
      throw new InvalidArgument(
        `return object is not of type 'DataFrame' (danfojs-node), got type '${typeName(value)}' instead`,
      );
    }
    const view = frameView(value);
    this.validateTable(view.columns, [view.rows.length, view.columns.length], BadInput);
    return this.applyColumnNames ? { ...view, columns: [...this.columns!] } : view;
  }

  /** Encode a view in the default format. */
  encode(view: FrameView): string | Uint8Array {
    switch (this.defaultFormat) {
      case 'json':
        return frameToJson(view, this.orient);
      case 'csv':
        return frameToCsv(view);
      case 'parquet':
        return frameToParquet(view);
    }
  }

  async toHttpResponse(value: DataFrame, _ctx: Context | null): Promise<HttpResponse> {
    const view = this.outputView(value);
    return buildResponse({ body: this.encode(view), mediaType: this.mimeType });
  }

  /** Clients send rows (or a column map) as JSON in this orient and read answers back as rows. */
  override clientWire(): WireForm {
    return { form: 'table-json', orient: this.orient };
  }

  // --- Open Inference Protocol (v2): one tensor per column, for a JSON table ---

  override tensorMetadata(): TensorMetadata[] | null {
    if (this.defaultFormat !== 'json') return null;
    const dtypes = typeof this.dtype === 'object' && this.dtype !== null ? this.dtype : {};
    return columnTensorMetadata(this.columns ?? [], dtypes);
  }

  override fromTensors(tensors: readonly Tensor[], ctx: Context): Promise<DataFrame> {
    const body = tableFromColumns([...tensors], this.orient);
    return this.fromHttpRequest(bodyRequest(ctx, body, 'application/json'));
  }

  override async toTensors(value: DataFrame): Promise<Tensor[]> {
    return columnsFromTable(JSON.parse(frameToJson(this.outputView(value), this.orient)), this.orient);
  }

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<DataFrame> {
    const payload = protoPayload<DataFrameMessage>(message, OWNER, 'dataframe');
    if (this.orient !== 'columns') {
      throw new BadInput(
        "'dataframe' field currently only supports 'columns' orient. Make sure to set 'orient=columns' in PandasDataFrame.",
      );
    }
    const table = dataFrameFromMessage(payload);
    this.validateTable(table.columns, [rowCount(table), table.columns.length], BadInput);
    if (this.applyColumnNames) table.columns = [...this.columns!];
    requireDeclaredColumns(table.columns, this.dtype, this.enforceDtype, OWNER);
    return tableToDanfo(await loadDanfo(), table, OWNER);
  }

  override async toProto(value: DataFrame): Promise<DataFrameMessage> {
    return dataFrameToMessage(this.outputView(value));
  }

  /** `{column: dtype}` when the descriptor knows one per column (given, or from the sample). */
  private dtypeMap(): Record<string, Dtype> | null {
    const d = this.dtype;
    if (d !== null && typeof d === 'object') return d;
    if (typeof d === 'string' && this.columns) return Object.fromEntries(this.columns.map((c) => [c, d]));
    return null;
  }

  override openapiSchema(): SchemaObject {
    return frameSchema(this.orient, this.dtypeMap());
  }

  /** The sample in the configured orient, as a JSON value (docs/spec/io-descriptors.md D13: not a string). */
  override openapiExample(): unknown {
    return this.sampleView ? JSON.parse(frameToJson(this.sampleView, this.orient)) : null;
  }

  /** The sample, else one row of the declared columns and dtypes (see exampleFrame). */
  private requestView(): FrameView {
    return this.sampleView ?? exampleFrame(this.columns, this.dtypeMap());
  }

  override openapiRequestExample(): unknown {
    return JSON.parse(frameToJson(this.requestView(), this.orient));
  }

  /** One media type's schema and example: a request's (derived when no sample) or a response's (the sample). */
  private formatContent(format: Format, request: boolean): { schema: SchemaObject; example?: unknown } {
    if (format === 'parquet') return { schema: { type: 'string', format: 'binary' } };
    const schema: SchemaObject = format === 'json' ? this.openapiSchema() : { type: 'string' };
    const view = request ? this.requestView() : this.sampleView;
    if (!view) return { schema };
    return {
      schema,
      example: format === 'json' ? JSON.parse(frameToJson(view, this.orient)) : frameToCsv(view),
    };
  }

  /** Every accepted request format, the default first. */
  override openapiRequestBody(): RequestBodyObject {
    const formats: Format[] = [
      this.defaultFormat,
      ...(['json', 'csv', 'parquet'] as const).filter((f) => f !== this.defaultFormat),
    ];
    return {
      content: Object.fromEntries(formats.map((f) => [FORMATS[f], this.formatContent(f, true)])),
      required: true,
      'x-tiffin-io-descriptor': this.toSpec(),
    };
  }

  override openapiResponses(): ResponseObject {
    return {
      description: 'Successful Response',
      content: { [this.mimeType]: this.formatContent(this.defaultFormat, false) },
      'x-tiffin-io-descriptor': this.toSpec(),
    };
  }

  override toSpec(): DescriptorSpec {
    return {
      id: PandasDataFrame.descriptorId,
      args: {
        orient: this.orient,
        columns: this.columns,
        apply_column_names: this.applyColumnNames,
        dtype: this.dtype,
        shape: this.shape,
        enforce_dtype: this.enforceDtype,
        enforce_shape: this.enforceShape,
        default_format: this.defaultFormat,
      },
    };
  }

  static override fromSpec(spec: DescriptorSpec): PandasDataFrame {
    return new PandasDataFrame(specArgs<PandasDataFrameOptions>(spec, 'PandasDataFrame'));
  }

  /**
   * A descriptor whose unset options come from a sample: a danfo DataFrame, records (array of
   * objects), JSON text in the `orient` layout, or a path to a .json/.csv/.parquet file.
   * Parquet files need an async read, hence `fromSample` is async.
   */
  static async fromSample(sample: unknown, options: PandasDataFrameOptions = {}): Promise<PandasDataFrame> {
    const probe = new PandasDataFrame({
      ...options,
      enforce_dtype: false,
      enforce_shape: false,
      apply_column_names: false,
    });
    let view: FrameView;
    if (isDataFrame(sample)) view = frameView(sample);
    else view = tableAsView(await probe.tableFromSample(sample));
    const d = new PandasDataFrame({
      ...options,
      shape: options.shape ?? [view.rows.length, view.columns.length],
      columns: options.columns ?? [...view.columns],
      dtype: options.dtype ?? Object.fromEntries(view.columns.map((c, i) => [c, view.dtypes[i]!])),
    });
    d.sample = sample;
    d.sampleView = view;
    return d;
  }

  private async tableFromSample(sample: unknown): Promise<Table> {
    if (typeof sample === 'string' && existsSync(sample)) {
      const ext = extname(sample).toLowerCase();
      const formats: Record<string, Format> = {
        '.json': 'json',
        '.csv': 'csv',
        '.parquet': 'parquet',
        '.pq': 'parquet',
      };
      const format = formats[ext];
      if (!format) throw new InvalidArgument(`Unsupported sample '${sample}' format.`);
      return this.decode(readFileSync(sample), format);
    }
    const text = typeof sample === 'string' ? sample : JSON.stringify(sample);
    try {
      return await this.decode(Buffer.from(text ?? 'null', 'utf8'), 'json');
    } catch (err) {
      throw new InvalidArgument(
        `Failed to create a DataFrame from sample ${String(sample).slice(0, 200)}: ${(err as Error).message}`,
      );
    }
  }
}

/** A typed table seen as a view (samples that never became a danfo frame). */
export function tableAsView(table: Table): FrameView {
  const n = rowCount(table);
  const rows: unknown[][] = Array.from({ length: n }, (_, r) => table.data.map((col) => col[r]));
  return {
    columns: table.columns,
    index: table.index ?? Array.from({ length: n }, (_, i) => i),
    dtypes: table.dtypes,
    rows,
  };
}
