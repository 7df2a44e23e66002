import { type DType, dtypeKind } from '../ndarray/dtype.js';

/**
 * Request examples derived from what a descriptor declares, for `/docs.json` and the API page when no
 * sample was given: values of the declared dtype in the declared shape (a `-1` dimension becomes 1).
 */

/** One element of `dtype` as JSON: `false`, `""`, `0` (no dtype: a number). */
export function exampleElement(dtype: DType | null): unknown {
  if (dtype === null) return 0;
  switch (dtypeKind(dtype)) {
    case 'b':
      return false;
    case 'U':
    case 'O':
      return '';
    default:
      return 0;
  }
}

/** Elements past which a derived example is left out (it would swell /docs.json and the page). */
const MAX_EXAMPLE_ELEMENTS = 4096;

/**
 * Nested lists of `shape` (no shape: one dimension of one element) filled with `element`; null when the
 * declared shape holds more than MAX_EXAMPLE_ELEMENTS elements (a smaller example would not be valid).
 */
export function exampleArray(shape: readonly number[] | null, element: unknown): unknown[] | null {
  const dims = shape && shape.length > 0 ? shape.map((d) => (d < 0 ? 1 : d)) : [1];
  if (dims.reduce((n, d) => n * d, 1) > MAX_EXAMPLE_ELEMENTS) return null;
  const build = (level: number): unknown[] =>
    Array.from({ length: dims[level]! }, () => (level === dims.length - 1 ? element : build(level + 1)));
  return build(0);
}
