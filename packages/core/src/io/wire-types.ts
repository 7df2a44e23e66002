import type { TypedArray } from '../ndarray/dtype.js';

/**
 * Type-only description of a descriptor as a client sees it on the wire, read by typed clients
 * (`@tiffin/client`). `Send` is what a client passes when the descriptor is an API's input; `Receive` is
 * what it gets back when the descriptor is an API's output. Descriptors declare it with
 * `declare readonly '~wire'?: WireTypes<Send, Receive>` — a `declare` field, so nothing exists at run time.
 */
export interface WireTypes<Send = unknown, Receive = unknown> {
  readonly send: Send;
  readonly receive: Receive;
}

/** A JSON array tree as a client holds it: numbers, booleans, strings (or null) nested in arrays. */
/** What a client may send to a NumpyNdarray input: an NDArray, a flat typed array, or nested arrays. */
export type NDArraySource = NDArrayLike | TypedArray | NestedList;

export type NestedList = number | boolean | string | null | NestedList[];

/** Anything with a shape that turns itself into nested arrays (an NDArray, or a look-alike). */
export interface NDArrayLike {
  readonly shape: readonly number[];
  toArray(): unknown;
}

/** What a client may send as a file or image: bytes, a Blob (its type is sent), or a file path (Node only). */
export type BinarySource = Blob | Uint8Array | ArrayBuffer | string;

/** One server-sent event as a client reads it. */
export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
  readonly id: string | undefined;
}

/** A table row as a client sends or receives it. */
export type TableRow = Record<string, unknown>;

/** What a client sends for descriptor `D` used as an input (`unknown` when `D` declares nothing). */
export type WireSend<D> = D extends { readonly '~wire'?: infer W }
  ? NonNullable<W> extends WireTypes<infer S, unknown>
    ? S
    : unknown
  : unknown;

/** What a client receives for descriptor `D` used as an output (`unknown` when `D` declares nothing). */
export type WireReceive<D> = D extends { readonly '~wire'?: infer W }
  ? NonNullable<W> extends WireTypes<unknown, infer R>
    ? R
    : unknown
  : unknown;
