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
export type BatchInputOf<D> = D extends { readonly batching?: Batching<infer _I, infer _O, infer B, infer _BO> }
  ? B
  : never;
/** The batched value a batchable API function returns to its output descriptor. */
export type BatchOutputOf<D> = D extends { readonly batching?: Batching<infer _I, infer _O, infer _BI, infer B> }
  ? B
  : never;
