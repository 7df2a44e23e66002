import { InvalidArgument } from '../../errors/index.js';

/** The request header a client names its own deadline with, in seconds (docs/spec/io-descriptors.md §10.9). */
export const TIMEOUT_HEADER = 'tiffin-timeout';

/** Seconds as a client may write them: digits, an optional fraction; no sign, exponent, `NaN` or `Infinity`. */
const SECONDS = /^\d{1,9}(?:\.\d{1,9})?$/;

function invalid(what: string): InvalidArgument {
  return new InvalidArgument(`${what} must be a number of seconds above 0, such as 2.5`, {
    code: 'INVALID_TIMEOUT',
  });
}

/**
 * The seconds a `Tiffin-Timeout` field names; undefined when absent. Anything else than a plain positive
 * number of seconds (`1e400`, `NaN`, `-1`, `0`, two values) is the client's mistake: 400 `INVALID_TIMEOUT`.
 */
export function timeoutOfField(field: string | undefined): number | undefined {
  if (field === undefined) return undefined;
  const text = field.trim();
  const seconds = SECONDS.test(text) ? Number(text) : 0;
  if (!(seconds > 0)) throw invalid('Tiffin-Timeout');
  return quantized(seconds);
}

/** The seconds a JSON value names (v2 `parameters.timeout`); undefined when absent, else as the header. */
export function timeoutOfValue(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1e9)
    throw invalid('parameters.timeout');
  return quantized(value);
}

/**
 * `seconds` cut to two significant digits (2.537 → 2.5, 0.0417 → 0.041): the deadlines keep one queue per
 * duration, so a client's durations are a few hundred at most, never one per value sent. Never longer than asked.
 */
export function quantized(seconds: number): number {
  const step = 10 ** (Math.floor(Math.log10(seconds)) - 1);
  const cut = Math.floor(seconds / step + 1e-9) * step;
  return cut > 0 ? cut : seconds;
}
