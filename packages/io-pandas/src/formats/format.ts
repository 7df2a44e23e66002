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

/**
 * Request format from the parsed Content-Type (docs/spec/io-descriptors.md D2: essence compared, parameters ignored, so
 * `text/csv; charset=utf-8` is CSV); anything else or no header → the descriptor's default format.
 * `application/octet-stream` says only "bytes": it is the default format too (the reference reads it as
 * Parquet whatever the descriptor says, which let any client pick the Parquet decoder); name Parquet with
 * `application/vnd.apache.parquet` (or `application/x-parquet`), or set `default_format: 'parquet'`.
 */
export function requestFormat(contentType: MediaType | null, defaultFormat: Format): Format {
  switch (contentType?.essence) {
    case 'application/json':
      return 'json';
    case 'application/vnd.apache.parquet':
    case 'application/x-parquet':
      return 'parquet';
    case 'text/csv':
      return 'csv';
    default:
      return defaultFormat;
  }
}
