import { InvalidArgument } from '@tiffin/core';
import { type Dtype, normalizeDtype } from './dtype.js';

/** The `dtype` option: true (infer), false (no string→number inference), one dtype, or a column map. */
export type DtypeOption = boolean | string | Record<string, string> | null;

/** `dtype` after normalisation. */
export type ResolvedDtype = boolean | Dtype | Record<string, Dtype> | null;

/** Accepts the spec's serialised forms too (`"null"`, `"True"`, `"False"`, docs/spec/io-descriptors.md §3.8). */
export function resolveDtype(option: DtypeOption | undefined): ResolvedDtype {
  if (option === undefined || option === null || option === 'null' || option === 'None') return null;
  if (option === true || option === 'True') return true;
  if (option === false || option === 'False') return false;
  if (typeof option === 'string') return normalizeDtype(option);
  if (typeof option === 'object' && !Array.isArray(option)) {
    const out: Record<string, Dtype> = {};
    for (const [col, name] of Object.entries(option)) {
      if (typeof name !== 'string')
        throw new InvalidArgument(`dtype for column '${col}' must be a dtype name`);
      out[col] = normalizeDtype(name);
    }
    return out;
  }
  throw new InvalidArgument(
    `dtype must be true, false, a dtype name or a {column: dtype} map, got ${JSON.stringify(option)}`,
  );
}

/** Shape option: a tuple with -1 wildcards. A bare number for a DataFrame means its column count. */
export function resolveShape(
  shape: readonly number[] | number | null | undefined,
  owner: string,
): number[] | null {
  if (shape === null || shape === undefined) return null;
  const tuple = typeof shape === 'number' ? [-1, shape] : [...shape];
  if (!tuple.every((d) => Number.isInteger(d) && d >= -1)) {
    throw new InvalidArgument(
      `${owner}: shape must be non-negative integers or -1, got ${JSON.stringify(shape)}`,
    );
  }
  return tuple;
}

/** docs/spec/io-descriptors.md §3.5 step 4: pairwise over the shorter tuple, -1 matches anything. */
export function shapeMatches(want: readonly number[], got: readonly number[]): boolean {
  const len = Math.min(want.length, got.length);
  for (let i = 0; i < len; i++) {
    if (want[i] !== -1 && got[i] !== -1 && want[i] !== got[i]) return false;
  }
  return true;
}

/** docs/spec/io-descriptors.md D8: an enforce flag without what it enforces is a programming error (dtype checked before shape). */
export function requireEnforceTargets(flags: {
  enforceDtype: boolean;
  hasDtype: boolean;
  enforceShape: boolean;
  hasShape: boolean;
}): void {
  if (flags.enforceDtype && !flags.hasDtype) {
    throw new InvalidArgument("'dtype' must be specified when 'enforce_dtype=True'");
  }
  if (flags.enforceShape && !flags.hasShape) {
    throw new InvalidArgument("'shape' must be specified when 'enforce_shape=True'");
  }
}
