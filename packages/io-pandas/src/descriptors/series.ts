import {
  BadInput,
  type Batching,
  buildResponse,
  type Context,
  type DescriptorSpec,
  type HttpRequest,
  type HttpResponse,
  InvalidArgument,
  IODescriptor,
  type ProtoPayload,
  type SchemaObject,
  type SeriesMessage,
  type WireForm,
  type WireTypes,
} from '@tiffin/core';
import { isSeries, seriesFromValues, seriesView } from '../danfo/convert.js';
import { loadDanfo, type Series } from '../danfo/load.js';
import { parseJsonBody } from '../formats/json-parse.js';
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
import { axisLabel, type Label, shapeText, typeName } from '../table/table.js';
import { castColumn, inferColumn } from '../table/typing.js';
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

interface RawSeries {
  name: string | null;
  index: Label[] | null;
  values: unknown[];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

  /** JSON value → raw series per orient (docs/spec/io-descriptors.md §4): a list is values, an object label→value. */
  private rawFromJson(value: unknown): RawSeries {
    if (this.orient === 'split') {
      if (!isPlainObject(value) || !Array.isArray(value.data)) {
        throw new BadInput(
          `${OWNER} (orient 'split'): expected {"name", "index", "data": [...]}, got ${typeName(value)}`,
        );
      }
      const index = value.index;
      if (index !== undefined && (!Array.isArray(index) || index.length !== value.data.length)) {
        throw new BadInput(
          `${OWNER} (orient 'split'): "index" must be an array with one label per value in "data"`,
        );
      }
      const name = value.name;
      return {
        name: typeof name === 'string' ? name : null,
        index: (index as Label[] | undefined) ?? null,
        values: value.data,
      };
    }
    if (this.orient === 'table' && isPlainObject(value) && Array.isArray(value.data)) {
      const rows = value.data as unknown[];
      const index: Label[] = [];
      const values: unknown[] = [];
      rows.forEach((row, r) => {
        if (!isPlainObject(row))
          throw new BadInput(`${OWNER} (orient 'table'): row ${r} is ${typeName(row)}, expected an object`);
        const { index: label, ...rest } = row;
        index.push(label as Label);
        values.push(Object.values(rest)[0] ?? null);
      });
      return { name: null, index, values };
    }
    if (Array.isArray(value)) return { name: null, index: null, values: value };
    if (isPlainObject(value)) {
      const keys = Object.keys(value);
      return { name: null, index: keys.map(axisLabel), values: keys.map((k) => value[k]) };
    }
    throw new BadInput(
      `${OWNER} (orient '${this.orient}'): expected a JSON array or object, got ${typeName(value)}`,
    );
  }

  private typed(raw: RawSeries): { dtype: Dtype; values: unknown[] } {
    const forced = this.enforceDtype ? this.concreteDtype : null;
    if (forced) {
      const labelOf = (r: number) => raw.index?.[r] ?? r;
      return {
        dtype: forced,
        values: castColumn(raw.values, forced, { owner: OWNER, column: null, labelOf }),
      };
    }
    return inferColumn(raw.values, this.dtype === false ? 'none' : 'infer');
  }

  private checkShape(length: number, errorClass: typeof BadInput | typeof InvalidArgument): void {
    if (this.enforceShape && this.shape && !shapeMatches(this.shape, [length])) {
      throw new errorClass(
        `${OWNER}: Expecting Series of shape '${shapeText(this.shape)}', but '${shapeText([length])}' was received.`,
      );
    }
  }

  async fromHttpRequest(request: HttpRequest): Promise<Series> {
    const [dfd, body] = await Promise.all([loadDanfo(), request.body()]);
    const raw = this.rawFromJson(parseJsonBody(body, OWNER, request.limits.maxDepth));
    const { dtype, values } = this.typed(raw);
    this.checkShape(values.length, BadInput);
    return seriesFromValues(dfd, values, raw.index, dtype, raw.name, OWNER);
  }

  /** Spec 4 validateSeries on a returned value: shape, then same-kind dtype cast or (enforced) error. */
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
      const raw = probe.rawFromJson(value);
      const typed = probe.typed(raw);
      view = {
        name: raw.name,
        index: raw.index ?? typed.values.map((_, i) => i),
        dtype: typed.dtype,
        values: typed.values,
      };
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
