import { BadInput } from '../errors/index.js';

/**
 * The batch hooks of a descriptor (adaptive batching, `svc.api({ batchable: true, ... })`). A descriptor that
 * can take part in a batchable API sets `batching` to an object with these four methods. As an input
 * descriptor it uses `rows` and `merge`; as an output descriptor, `batchRows` and `split`.
 *
 * A request may itself hold several rows (an NDArray of k rows along `batchDim`, a DataFrame of k rows, a JSON
 * array of k items): `rows` says how many, and a batch never holds more than `max_batch_size` rows.
 */
export interface Batching<In, Out, BatchIn, BatchOut> {
  /** Rows one request's input holds along `batchDim` (at least 1). Throw `BadInput` when it cannot be batched. */
  rows(item: In, batchDim: number): number;
  /** Join the inputs of several requests, in order, into the one value the API function gets. */
  merge(items: readonly In[], batchDim: number): BatchIn;
  /** Rows the function's batched output holds along `batchDim` (checked against the rows sent in). */
  batchRows(batch: BatchOut, batchDim: number): number;
  /** Cut the function's batched output back into one value per request, `rows[i]` rows each, in order. */
  split(batch: BatchOut, rows: readonly number[], batchDim: number): Out[];
}

/** Batching with its types erased (what the runtime holds; methods are bivariant, so any descriptor's fits). */
export type AnyBatching = Batching<unknown, unknown, unknown, unknown>;

/** The batched value an input descriptor gives a batchable API function. */
export type BatchInputOf<D> = D extends {
  readonly batching?: Batching<infer _I, infer _O, infer B, infer _BO>;
}
  ? B
  : never;
/** The batched value a batchable API function returns to its output descriptor. */
export type BatchOutputOf<D> = D extends {
  readonly batching?: Batching<infer _I, infer _O, infer _BI, infer B>;
}
  ? B
  : never;

/** Rows of an array-like value of shape `shape` along `batchDim` (the built-ins' `rows`/`batchRows`). */
export function rowsAlong(shape: readonly number[], batchDim: number, what: string): number {
  if (batchDim >= shape.length) {
    throw new BadInput(
      `${what}: this API batches along dimension ${batchDim}, but the value has only ${shape.length} dimension(s)`,
    );
  }
  const rows = shape[batchDim]!;
  if (rows < 1) throw new BadInput(`${what}: the value holds no rows along dimension ${batchDim}`);
  return rows;
}

/**
 * Batching where each request is one item: the function gets an array of the requests' values and returns
 * an array with one output per item, in order (Text, Image).
 */
export function oneItemPerRequest<In, Out>(what: string): Batching<In, Out, In[], Out[]> {
  return {
    rows: () => 1,
    merge: (items) => [...items],
    batchRows: (batch) => {
      if (!Array.isArray(batch))
        throw new TypeError(`${what}: a batchable API returns an array, one item per input`);
      return batch.length;
    },
    split: (batch) => [...batch],
  };
}

/**
 * Batching of JSON arrays: each request sends an array of k items (k rows); the function gets all items in one
 * array and returns one output item per input item; each caller gets the array of its own items.
 */
export function arrayItems(what: string): Batching<unknown, unknown, unknown[], unknown[]> {
  return {
    rows: (item) => {
      if (!Array.isArray(item)) {
        throw new BadInput(`${what}: this API batches requests, so it takes a JSON array of items`);
      }
      if (item.length === 0) throw new BadInput(`${what}: the array holds no items`);
      return item.length;
    },
    merge: (items) => (items as unknown[][]).flat(1),
    batchRows: (batch) => {
      if (!Array.isArray(batch))
        throw new TypeError(`${what}: a batchable API returns an array, one item per input`);
      return batch.length;
    },
    split: (batch, rows) => {
      const parts: unknown[][] = [];
      let at = 0;
      for (const n of rows) {
        parts.push(batch.slice(at, at + n));
        at += n;
      }
      return parts;
    },
  };
}
