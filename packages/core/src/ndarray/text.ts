import { JsonFloat } from '../encoding/json-float.js';
import { roundToFloat16 } from './dtype.js';

/**
 * Text form of a value when an array is converted to the `str` dtype (docs/spec/io-descriptors.md §2.2): the host language's
 * `str()` of the reference, so `1` → "1", `1.5` → "1.5", `2.0` (a float literal) → "2.0", `true` → "True",
 * `null` → "None", `1e16` → "1e+16".
 */
export function valueToText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? integerText(value) : formatPyFloat(value);
  if (value instanceof JsonFloat) return formatPyFloat(value.value);
  if (value === null || value === undefined) return 'None';
  return JSON.stringify(value) ?? String(value);
}

/** Integral JS numbers print as integers while exact; beyond 2^53 they print like floats. */
function integerText(value: number): string {
  if (Number.isSafeInteger(value)) return Object.is(value, -0) ? '0' : String(value);
  return formatPyFloat(value);
}

/**
 * PYFLOAT of docs/spec/io-descriptors.md §1.4: shortest round-tripping digits, positional for exponents in (-4, 16], scientific
 * (`1e-05`, `1e+16`) otherwise, always with a `.0` or exponent so it reads as a float.
 * `digits` overrides the digit source (used for float32/float16 values in their own precision).
 */
export function formatPyFloat(x: number, digits?: string): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  // toExponential() gives the shortest round-tripping digits d1.d2…dn and the exponent.
  const exp = digits ?? Math.abs(x).toExponential();
  const [mantissa = '', expText = '0'] = exp.split('e');
  const D = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  const P = Number(expText) + 1;
  const n = D.length;
  let body: string;
  if (P > -4 && P <= 16) {
    if (P <= 0) body = `0.${'0'.repeat(-P)}${D}`;
    else if (n <= P) body = `${D}${'0'.repeat(P - n)}.0`;
    else body = `${D.slice(0, P)}.${D.slice(P)}`;
  } else {
    const e = P - 1;
    const ee = String(Math.abs(e)).padStart(2, '0');
    body = `${D[0]}${n > 1 ? `.${D.slice(1)}` : ''}e${e < 0 ? '-' : '+'}${ee}`;
  }
  return sign + body;
}

/**
 * Shortest text of a float32/float16 value in its own precision (numpy prints float32 0.1 as "0.1", not
 * the widened double 0.10000000149011612).
 */
export function formatNarrowFloat(x: number, width: 16 | 32): string {
  if (!Number.isFinite(x) || x === 0) return formatPyFloat(x);
  const round = width === 32 ? Math.fround : roundToFloat16;
  const maxDigits = width === 32 ? 9 : 5;
  for (let p = 1; p <= maxDigits; p++) {
    const candidate = Math.abs(x).toExponential(p - 1);
    if (round(Number(candidate)) === Math.abs(x)) return formatPyFloat(x, candidate);
  }
  return formatPyFloat(x);
}
