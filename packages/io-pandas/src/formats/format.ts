import { InvalidArgument } from '@tiffin/core';
import type { MediaType } from '@tiffin/core/descriptor';

/** Wire formats of a DataFrame. */
export const FORMATS = {
  json: 'application/json',
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv',
} as const;
export type Format = keyof typeof FORMATS;

export function checkFormat(value: unknown, owner: string): Format {
  if (typeof value === 'string' && value in FORMATS) return value as Format;
  throw new InvalidArgument(
    `${owner}: default_format must be one of 'json', 'parquet', 'csv', got ${JSON.stringify(value)}`,
  );
}

/** A Parquet file begins and ends with these four bytes ("PAR1"). */
const PARQUET_MAGIC = Buffer.from('PAR1', 'latin1');

/** Whether `body` is framed as a Parquet file: the magic at both ends, a footer length between them. */
export function looksLikeParquet(body: Uint8Array): boolean {
  return (
    body.length >= 12 &&
    PARQUET_MAGIC.equals(body.subarray(0, 4)) &&
    PARQUET_MAGIC.equals(body.subarray(body.length - 4))
  );
}

/**
 * Request format from the parsed Content-Type (docs/spec/io-descriptors.md D2: essence compared, parameters ignored, so
 * `text/csv; charset=utf-8` is CSV); anything else or no header → the descriptor's default format.
 * A body framed as Parquet (`PAR1` at both ends) is Parquet unless the header names JSON or CSV: the
 * reference's clients send Parquet as `application/octet-stream`. Bytes that are not framed so stay the default
 * format, so no content type picks the Parquet decoder for a body that is not Parquet.
 */
export function requestFormat(
  contentType: MediaType | null,
  defaultFormat: Format,
  body?: Uint8Array,
): Format {
  switch (contentType?.essence) {
    case 'application/json':
      return 'json';
    case 'application/vnd.apache.parquet':
    case 'application/x-parquet':
      return 'parquet';
    case 'text/csv':
      return 'csv';
    default:
      return body && looksLikeParquet(body) ? 'parquet' : defaultFormat;
  }
}
