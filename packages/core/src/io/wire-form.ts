/**
 * How a value travels in an HTTP body, as a client needs to know it: a small closed set of forms that the
 * OpenAPI document publishes per API side (`x-tiffin-wire` beside `x-tiffin-io-descriptor`). A fetch-only
 * client (`@tiffin/client`) encodes and decodes by the form, never by descriptor id, so a descriptor it has
 * never seen works as soon as it names its form (`IODescriptor.clientWire()`; the default is derived from
 * `mimeType`).
 */
export type WireForm =
  /** A JSON document of the value as it is. */
  | { readonly form: 'json' }
  /** A string, sent with `mediaType` (`text/plain` when absent). */
  | { readonly form: 'text'; readonly mediaType?: string }
  /**
   * Bytes (a Blob, a Uint8Array, a file path in Node). `mediaType` is sent when the caller's value has no type;
   * `sniff: 'image'` reads the type of untyped bytes from an image's magic number.
   */
  | { readonly form: 'bytes'; readonly mediaType?: string; readonly sniff?: 'image' }
  /** An n-dimensional array as nested JSON lists; a flat typed array is shaped by `shape` (one -1 allowed). */
  | { readonly form: 'ndarray-json'; readonly shape?: readonly number[] }
  /** Table rows (or a map of columns) as the pandas JSON layout `orient`; answers are read back as rows. */
  | { readonly form: 'table-json'; readonly orient: string }
  /** A list of values (or label → value) as the pandas Series JSON layout `orient`. */
  | { readonly form: 'series-json'; readonly orient: string }
  /** `multipart/form-data`, one part per field in the form of its own (untyped parts when `parts` is empty). */
  | { readonly form: 'multipart'; readonly parts: Readonly<Record<string, WireForm>> };

/** The form a media type implies: JSON, text, multipart, else bytes of that type. */
export function wireFormOf(mediaType: string | null): WireForm {
  const essence = (mediaType ?? '').split(';')[0]!.trim().toLowerCase();
  if (essence === 'application/json' || essence.endsWith('+json')) return { form: 'json' };
  if (essence.startsWith('text/')) return { form: 'text', mediaType: essence };
  if (essence === 'multipart/form-data') return { form: 'multipart', parts: {} };
  return essence ? { form: 'bytes', mediaType: essence } : { form: 'bytes' };
}
