import { ConfigError } from '../errors/index.js';

/**
 * Every bound Tiffin puts on what a client may send, in one place (docs/security.md lists them). The server
 * resolves them once from `serve({ limits })` and hands them to descriptors on each request
 * (`HttpRequest.limits`); code without a request (gRPC messages, samples) uses the defaults.
 */
export interface Limits {
  /**
   * Deepest nesting of arrays/objects in a JSON-ish input (JSON, NumpyNdarray, PandasSeries/DataFrame) and in
   * the JSON encoder's walk over a result. Deeper → 400 on input (a 500 naming the limit on output), never a
   * stack overflow. Default 512, NumpyNdarray's rule.
   */
  maxDepth: number;
  /** Most parts (files and fields) in one multipart/form-data body; more → 413. Default 1000. */
  maxParts: number;
  /** Longest file name of a multipart file part, in characters; longer → 400. Default 1024. */
  maxFileNameLength: number;
  /** Longest part name of a multipart part, in characters; longer → 400. Default 1024. */
  maxPartNameLength: number;
  /**
   * Most values one input may declare before anything is allocated for them: table cells, rows × columns, of
   * PandasDataFrame bodies (Parquet footers and page headers, CSV, JSON orients that fill in missing cells).
   * More → 413. Default 4,194,304 (2^22; a DataFrame costs about 115 bytes a cell, so some 460 MB). Arrays (NumpyNdarray,
   * gRPC NDArray, v2 tensors) must carry every value they declare, so the body size bounds them.
   */
  maxElements: number;
  /**
   * Most values a compressed table (Parquet) may declare per byte of its body, beyond a first 65,536: a
   * decompression-bomb ratio (one RLE run of a repeated value can declare millions of rows in 100 bytes).
   * More → 413. Default 16 (real tables take bytes per number, even dictionary-coded categories a few bits).
   */
  maxValuesPerByte: number;
  /**
   * Most values one answer may carry (the arrays of a NumpyNdarray or Tensors output, over HTTP, gRPC and the
   * Open Inference Protocol), counted before it is encoded. More → 422 `ANSWER_TOO_LARGE`. Default 4,194,304
   * (2^22; as JSON some 40–100 MB). An answer's size may depend on the request's values, not only its size.
   */
  maxAnswerElements: number;
  /**
   * Bytes of one part's header block. Fixed by the multipart parser (busboy) at 16 KiB; longer → 400.
   * Listed here so that every bound is in one place; it cannot be raised.
   */
  readonly maxPartHeaderSize: number;
}

/** The multipart parser's own fixed cap on one part's header block (busboy's MAX_HEADER_SIZE). */
const PART_HEADER_SIZE = 16 * 1024;

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxDepth: 512,
  maxParts: 1000,
  maxFileNameLength: 1024,
  maxPartNameLength: 1024,
  maxElements: 4_194_304,
  maxValuesPerByte: 16,
  maxAnswerElements: 4_194_304,
  maxPartHeaderSize: PART_HEADER_SIZE,
});

/** The limits a caller may set (`serve({ limits })`); the part header size is the parser's and fixed. */
export type LimitOptions = Partial<Omit<Limits, 'maxPartHeaderSize'>>;

/** Defaults with `options` over them; every value must be a positive integer. */
export function resolveLimits(options: LimitOptions = {}): Readonly<Limits> {
  const resolved: Limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_LIMITS) || key === 'maxPartHeaderSize') {
      throw new ConfigError(
        `Unknown limit '${key}'; known limits: ${Object.keys(DEFAULT_LIMITS).join(', ')}`,
      );
    }
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(`Limit '${key}' must be a positive integer, got ${String(value)}`);
    }
    (resolved as unknown as Record<string, number>)[key] = value;
  }
  return Object.freeze(resolved);
}
