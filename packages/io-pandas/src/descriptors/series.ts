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
  type WireForm,
  type WireTypes,
} from '@tiffin/core';
import type { DescriptorSpec, SeriesMessage } from '@tiffin/core/descriptor';
import { isSeries, seriesFromValues, seriesView } from '../danfo/convert.js';
import { loadDanfo, type Series } from '../danfo/load.js';
import { decodeSeriesOffThread, prepareTables } from '../formats/decode-off-thread.js';
import { decodeSeries, type SeriesDecoding, seriesFromJson, typeSeries } from '../formats/decode-series.js';
import { seriesToJson } from '../formats/json-write.js';
import {
  fieldForValues,
  fieldValues,
  filledField,
  SERIES_FIELDS,
  type SeriesField,
  toMessage,
} from '../grpc/series-message.js';
import { exampleSeries } from '../openapi/example.js';
import { seriesSchema } from '../openapi/schema.js';
import { canCastSameKind, type Dtype, dtypeKind } from '../table/dtype.js';
import { requireEnforceTargets, resolveDtype, resolveShape, shapeMatches } from '../table/options.js';
import { type Orient, resolveOrient } from '../table/orient.js';
import { shapeText, typeName } from '../table/table.js';
import type { SeriesView } from '../table/view.js';
import { tableBatching } from './batching.js';
import { protoPayload } from './proto-payload.js';
import { specArgs } from './spec-args.js';

export interface PandasSeriesOptions {
  orient?: Orient;
  /** true: infer; false: no string→number inference; a dtype name (applied with `enforce_dtype`). */
  dtype?: string | boolean | null;
  enforce_dtype?: boolean;
  /** `[length]` (-1 wildcard), or a bare length. */
  shape?: readonly number[] | number | null;
  enforce_shape?: boolean;
}

const OWNER = 'PandasSeries';

/** Bodies under 16 KiB are decoded on the event loop; larger ones in a thread (as DataFrame bodies are). */
const INLINE_BYTES = 16 * 1024;

/** One-dimensional labelled values on the wire (JSON) ↔ a danfojs-node Series. */
export class PandasSeries extends IODescriptor<Series, Series> {
  static override readonly descriptorId = 'tiffin.io.PandasSeries';
  /** Requests' rows are concatenated; each caller gets its own rows of the output back. */
  override readonly batching: Batching<Series, Series, Series, Series> =
    tableBatching<Series>('PandasSeries');

  /** Clients send the values (a list, or an object label → value) and get the values back as a list. */
  declare readonly '~wire'?: WireTypes<unknown[] | Record<string, unknown>, unknown[]>;
  readonly protoFields = ['series'] as const;
  readonly orient: Orient;
  readonly dtype: Dtype | boolean | null;
  readonly enforceDtype: boolean;
  readonly shape: number[] | null;
  readonly enforceShape: boolean;
  private sampleView: SeriesView | undefined;

  constructor(options: PandasSeriesOptions = {}) {
    super();
    this.orient = resolveOrient(options.orient, OWNER);
    const dtype = resolveDtype(options.dtype);
    if (dtype !== null && typeof dtype === 'object') {
      throw new InvalidArgument(`${OWNER}: dtype must be one dtype name, not a column map`);
    }
    this.dtype = dtype;
    this.enforceDtype = options.enforce_dtype ?? false;
    const shape = options.shape;
    this.shape = typeof shape === 'number' ? resolveShape([shape], OWNER) : resolveShape(shape, OWNER);
    this.enforceShape = options.enforce_shape ?? false;
    requireEnforceTargets({
      enforceDtype: this.enforceDtype,
      hasDtype: this.concreteDtype !== null,
      enforceShape: this.enforceShape,
      hasShape: this.shape !== null,
    });
  }

  get mimeType(): string {
    return 'application/json';
  }

  private get concreteDtype(): Dtype | null {
    return typeof this.dtype === 'string' ? this.dtype : null;
  }

  private decoding(maxDepth: number): SeriesDecoding {
    return {
      orient: this.orient,
      dtype: this.dtype,
      enforceDtype: this.enforceDtype,
      owner: OWNER,
      maxDepth,
    };
  }

  private checkShape(length: number, errorClass: typeof BadInput | typeof InvalidArgument): void {
    if (this.enforceShape && this.shape && !shapeMatches(this.shape, [length])) {
      throw new errorClass(
        `${OWNER}: Expecting Series of shape '${shapeText(this.shape)}', but '${shapeText([length])}' was received.`,
      );
    }
  }

  /** danfo and the decoding threads load at startup, not on the first body (which held `/livez` for seconds). */
  override prepare(): Promise<void> {
    return prepareTables();
  }

  async fromHttpRequest(request: HttpRequest): Promise<Series> {
    const how = this.decoding(request.limits.maxDepth);
    const [dfd, series] = await Promise.all([
      loadDanfo(),
      request
        .body()
        .then((b) => (b.length < INLINE_BYTES ? decodeSeries(b, how) : decodeSeriesOffThread(b, how))),
    ]);
    const { name, index, dtype, values } = series;
    this.checkShape(values.length, BadInput);
    return seriesFromValues(dfd, values, index, dtype, name, OWNER);
  }

  /** docs/spec/io-descriptors.md §4 validateSeries on a returned value: shape, then same-kind dtype cast or (enforced) error. */
  outputView(value: unknown, errorClass: typeof BadInput | typeof InvalidArgument = BadInput): SeriesView {
    if (!isSeries(value)) {
      throw new InvalidArgument(
        `return object is not of type 'Series' (danfojs-node), got type '${typeName(value)}' instead`,
      );
    }
    const view = seriesView(value);
    this.checkShape(view.values.length, errorClass);
    const want = this.concreteDtype;
    if (!want || want === view.dtype) return view;
    if (canCastSameKind(view.dtype, want)) {
      const kind = dtypeKind(want);
      const values = kind === 'str' ? view.values.map((v) => (v == null ? null : String(v))) : view.values;
      return { ...view, dtype: want, values };
    }
    if (this.enforceDtype) {
      throw new errorClass(
        `${OWNER}: Expecting series of dtype "${want}", but "${view.dtype}" was received.`,
      );
    }
    return view;
  }

  async toHttpResponse(value: Series, _ctx: Context | null): Promise<HttpResponse> {
    return buildResponse({
      body: seriesToJson(this.outputView(value), this.orient),
      mediaType: this.mimeType,
    });
  }

  /** Clients send a list (or label → value) as JSON in this orient and read answers back as values. */
  override clientWire(): WireForm {
    return { form: 'series-json', orient: this.orient };
  }

  override async fromProto(message: ProtoPayload | Uint8Array): Promise<Series> {
    const msg = protoPayload<SeriesMessage>(message, OWNER, 'series');
    const want = this.concreteDtype;
    let field: SeriesField | null;
    if (want) {
      const found = (Object.keys(SERIES_FIELDS) as SeriesField[]).find((f) => SERIES_FIELDS[f] === want);
      field = found ?? filledField(msg, InvalidArgument);
    } else field = filledField(msg, InvalidArgument);
    const values = field ? fieldValues(msg, field) : [];
    const dtype: Dtype = field ? SERIES_FIELDS[field] : 'float64';
    this.checkShape(values.length, BadInput);
    return seriesFromValues(await loadDanfo(), values, null, dtype, null, OWNER);
  }

  override async toProto(value: Series): Promise<SeriesMessage> {
    const view = this.outputView(value, InvalidArgument);
    if (dtypeKind(view.dtype) === 'object' && !view.values.every((v) => typeof v === 'string')) {
      throw new InvalidArgument('Series has mixed dtype. Please convert it to a single dtype.');
    }
    return toMessage(fieldForValues(view.dtype, view.values, 'series'), view.values);
  }

  override openapiSchema(): SchemaObject {
    return seriesSchema(this.orient, this.concreteDtype);
  }

  override openapiExample(): unknown {
    return this.sampleView ? JSON.parse(seriesToJson(this.sampleView, this.orient)) : null;
  }

  /** The sample, else values of the declared dtype and length, in the configured orient. */
  override openapiRequestExample(): unknown {
    const view = this.sampleView ?? exampleSeries(this.concreteDtype, this.shape);
    return JSON.parse(seriesToJson(view, this.orient));
  }

  override toSpec(): DescriptorSpec {
    return {
      id: PandasSeries.descriptorId,
      args: {
        orient: this.orient,
        dtype: this.dtype,
        shape: this.shape,
        enforce_dtype: this.enforceDtype,
        enforce_shape: this.enforceShape,
      },
    };
  }

  static override fromSpec(spec: DescriptorSpec): PandasSeries {
    return new PandasSeries(specArgs<PandasSeriesOptions>(spec, 'PandasSeries'));
  }

  /** Unset options come from the sample: a danfo Series, a JSON list/object, or JSON text. */
  static fromSample(sample: unknown, options: PandasSeriesOptions = {}): PandasSeries {
    const probe = new PandasSeries({
      orient: options.orient,
      dtype: options.dtype === undefined ? null : options.dtype,
    });
    let view: SeriesView;
    if (isSeries(sample)) view = seriesView(sample);
    else {
      let value = sample;
      if (typeof sample === 'string') {
        try {
          value = JSON.parse(sample);
        } catch (err) {
          throw new InvalidArgument(
            `Failed to create a Series from sample ${sample.slice(0, 200)}: ${(err as Error).message}`,
          );
        }
      }
      const how = probe.decoding(DEFAULT_LIMITS.maxDepth);
      const typed = typeSeries(seriesFromJson(value, how), how);
      view = { ...typed, index: typed.index ?? typed.values.map((_, i) => i) };
    }
    const d = new PandasSeries({
      ...options,
      dtype: options.dtype ?? view.dtype,
      shape: options.shape ?? [view.values.length],
    });
    d.sample = sample;
    d.sampleView = view;
    return d;
  }
}
