import { TiffinClientError } from './errors.js';
import type { WireForm } from './schema.js';
import { readEvents } from './sse.js';
import type { TableRow } from './wire.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function protocol(message: string): TiffinClientError {
  return new TiffinClientError(message, 'protocol');
}

const isRow = (value: unknown): value is TableRow => isObject(value);
const isList = (value: unknown): value is unknown[] => Array.isArray(value);
/** `value` when it is a list whose every item passes `item`. */
const listOf = <T>(value: unknown, item: (v: unknown) => v is T): T[] | null =>
  Array.isArray(value) && value.every(item) ? (value as T[]) : null;

/**
 * A pandas JSON table in `orient` layout → row objects (the index is dropped, as records do). Anything else
 * (a server that is not Tiffin, a proxy's page that parsed as JSON) is a `protocol` error, checked down to the
 * rows' own shape.
 */
export function rowsFromTable(value: unknown, orient: string): TableRow[] {
  switch (orient) {
    case 'records': {
      const rows = listOf(value, isRow);
      if (rows) return rows;
      break;
    }
    case 'values': {
      const rows = listOf(value, isList);
      if (rows) return rows.map((row) => Object.fromEntries(row.map((v, i) => [String(i), v])));
      break;
    }
    case 'split': {
      if (!isObject(value)) break;
      const rows = listOf(value.data, isList);
      const columns = value.columns;
      if (rows && Array.isArray(columns)) {
        return rows.map((row) => Object.fromEntries(columns.map((c, i) => [String(c), row[i]])));
      }
      break;
    }
    case 'index':
      if (isObject(value) && Object.values(value).every(isRow)) return Object.values(value) as TableRow[];
      break;
    case 'columns':
      if (isObject(value) && Object.values(value).every(isRow)) {
        const columns = Object.entries(value as Record<string, TableRow>);
        const labels = columns.length > 0 ? Object.keys(columns[0]![1]) : [];
        return labels.map((label) => Object.fromEntries(columns.map(([c, col]) => [c, col[label]])));
      }
      break;
    case 'table': {
      if (!isObject(value)) break;
      const rows = listOf(value.data, isRow);
      if (rows) {
        const schema = isObject(value.schema) ? value.schema : {};
        const keys = Array.isArray(schema.primaryKey) ? (schema.primaryKey as unknown[]) : [];
        return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !keys.includes(k))));
      }
      break;
    }
  }
  throw protocol(`DataFrame response does not match orient '${orient}'`);
}

/** A pandas Series in `orient` layout → its values. */
export function valuesFromSeries(value: unknown, orient: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isObject(value)) {
    if (orient === 'split' && Array.isArray(value.data)) return value.data;
    if (orient === 'table' && Array.isArray(value.data)) {
      const rows = listOf(value.data, isRow);
      if (rows) return rows.map((row) => row.values ?? Object.values(row).at(-1));
      throw protocol(`Series response does not match orient '${orient}'`);
    }
    return Object.values(value);
  }
  throw protocol(`Series response does not match orient '${orient}'`);
}

/** Shape a parsed JSON body by the output's form (tables → rows, series → values). */
function shapeJson(value: unknown, wire: WireForm | null): unknown {
  if (wire?.form === 'table-json') return rowsFromTable(value, wire.orient);
  if (wire?.form === 'series-json') return valuesFromSeries(value, wire.orient);
  return value;
}

/** Forms whose answer is a file when it is not JSON (a CSV or Parquet table, bytes of a text type): a Blob. */
function answersBlob(wire: WireForm | null): boolean {
  return wire?.form === 'bytes' || wire?.form === 'table-json';
}

function mediaType(res: Response): string {
  return (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

async function parseJsonText(text: string): Promise<unknown> {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw protocol(`Response is not valid JSON: ${(err as Error).message}`);
  }
}

/** JSON answers: the forms whose body is always a JSON document. */
function isJsonForm(wire: WireForm | null): boolean {
  return (
    wire?.form === 'json' ||
    wire?.form === 'ndarray-json' ||
    wire?.form === 'table-json' ||
    wire?.form === 'series-json'
  );
}

/** A part of a multipart response, read by its field's form (or its own type). */
async function partValue(part: FormDataEntryValue, wire: WireForm | null): Promise<unknown> {
  if (typeof part === 'string') {
    if (wire?.form === 'text' || wire === null) return part;
    return shapeJson(await parseJsonText(part), wire);
  }
  const type = part.type.split(';')[0]!.trim().toLowerCase();
  if (wire?.form === 'bytes') return part;
  if (type === 'application/json' || isJsonForm(wire)) {
    return shapeJson(await parseJsonText(await part.text()), wire);
  }
  if (type.startsWith('text/') || wire?.form === 'text') return part.text();
  return part;
}

/**
 * The value of a successful response, by its media type: JSON (shaped by the output's form),
 * server-sent events as an async iterable, text as a string, multipart as an object of parts, anything
 * else as a Blob. `done` is called once the body is read (for event streams: once it starts).
 */
export async function decodeOutput(res: Response, wire: WireForm | null, done: () => void): Promise<unknown> {
  const type = mediaType(res);
  if (type === 'text/event-stream') {
    // The timeout covers the wait for the stream to start, not its length.
    done();
    return res.body ? readEvents(res.body) : (async function* empty() {})();
  }
  try {
    if (type === 'application/json' || type.endsWith('+json'))
      return shapeJson(await parseJsonText(await res.text()), wire);
    if (wire?.form === 'text') return await res.text();
    if (type.startsWith('text/') && !answersBlob(wire)) return await res.text();
    if (type === 'multipart/form-data') {
      const form = await res.formData();
      const fields = wire?.form === 'multipart' ? wire.parts : {};
      const out: Record<string, unknown> = {};
      for (const [name, part] of form.entries()) out[name] = await partValue(part, fields[name] ?? null);
      return out;
    }
    return await res.blob();
  } catch (err) {
    throw unreadable(err, type);
  } finally {
    done();
  }
}

/**
 * A body that could not be read as a `TiffinClientError`: the connection dropping mid-body is `network`; a body
 * that is not what its content type says (multipart that does not parse) is `protocol`.
 */
function unreadable(err: unknown, type: string): TiffinClientError {
  if (err instanceof TiffinClientError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const dropped = /terminated|aborted|ECONNRESET|socket/i.test(
    `${message} ${String((err as Error)?.cause ?? '')}`,
  );
  return new TiffinClientError(
    `Response body (${type || 'no content type'}) could not be read: ${message}`,
    dropped ? 'network' : 'protocol',
    0,
    undefined,
    undefined,
    { cause: err },
  );
}
