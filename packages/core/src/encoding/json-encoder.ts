import { InternalServerError } from '../errors/index.js';
import { DEFAULT_LIMITS } from '../limits/limits.js';
import { plainArray } from './plain-array.js';

/**
 * Encoders that turn values JSON cannot carry natively (NDArray, Map, Set, Date, BigInt, typed arrays,
 * DataFrame, ...) into plain JSON data. Packages register encoders for their own types here, so core
 * never imports them (io-pandas registers DataFrame/Series on import).
 */
export interface JsonEncoderRule {
  /** For messages and debugging. */
  readonly name: string;
  test(value: unknown): boolean;
  /** Return plain data; nested values are encoded again by the caller. */
  encode(value: unknown): unknown;
}

const rules: JsonEncoderRule[] = [];

/**
 * Register an encoder rule; the most recently registered rule is tried first. Rules see values that are not
 * plain JSON data (class instances, Maps, ...): plain objects and arrays are written as they are.
 */
export function registerJsonEncoder(rule: JsonEncoderRule): void {
  const i = rules.findIndex((r) => r.name === rule.name);
  if (i >= 0) rules.splice(i, 1);
  rules.unshift(rule);
}

export function jsonEncoderRules(): readonly JsonEncoderRule[] {
  return rules;
}

/** What the JSON descriptor tells its encoder about the request being answered. */
export interface JsonEncoderOptions {
  /** Deepest nesting to write (the server's `limits.maxDepth`; default `DEFAULT_LIMITS.maxDepth`). */
  maxDepth?: number;
}

/** A value → plain JSON data converter (the JSON descriptor's `json_encoder` option has this type). */
export type JsonEncoder = (value: unknown, options?: JsonEncoderOptions) => unknown;

/** A result nesting deeper than the encoder walks (`maxDepth`): the handler's, so a 500. */
function tooDeep(maxDepth: number): InternalServerError {
  return new InternalServerError(
    `The result nests arrays/objects deeper than ${maxDepth} levels; it cannot be written as JSON`,
  );
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The default encoder: returns plain JSON data for `value`, deeply. NDArray → nested lists (it has a
 * `toJSON`), Map → object, Set → array, Date → ISO string, BigInt → number when exact else a decimal
 * string, typed arrays → arrays, registered rules (DataFrame, ...), objects with `toJSON` → its result,
 * other objects (class instances too) → their own enumerable fields. Non-finite numbers stay numbers: the
 * writer turns them into null (docs/spec/io-descriptors.md D3). Functions and undefined members are dropped as JSON.stringify does.
 */
export function defaultJsonEncoder(value: unknown, options: JsonEncoderOptions = {}): unknown {
  const maxDepth = options.maxDepth ?? DEFAULT_LIMITS.maxDepth;
  // Most results already are plain JSON data: a read-only walk is far cheaper than the copying encode.
  return isPlainJsonData(value, 0, Math.min(MAX_PLAIN_DEPTH, maxDepth))
    ? value
    : encode(value, { seen: new Set(), maxDepth }, 0);
}

/** Deeper than this the walk gives up and leaves it to `encode` (which also detects cycles). */
const MAX_PLAIN_DEPTH = 64;

/**
 * True when JSON.stringify alone would write `value` as the encoder would: only primitives (no BigInt),
 * arrays and plain objects without `toJSON`. Anything else (class instances, Map, typed arrays, ...) may need
 * a rule, so it is not plain.
 */
function isPlainJsonData(value: unknown, depth: number, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return typeof value !== 'bigint';
  return isPlainContainer(value, depth, maxDepth);
}

/**
 * `isPlainJsonData` for an object or array; members that are primitives are checked in the loop, so the walk
 * makes one call per object or array, not one per value (most members of a result are primitives).
 */
function isPlainContainer(value: object, depth: number, maxDepth: number): boolean {
  if (depth >= maxDepth) return false;
  const next = depth + 1;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i];
      if (typeof member === 'object' && member !== null) {
        if (!isPlainContainer(member, next, maxDepth)) return false;
      } else if (typeof member === 'bigint') return false;
    }
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  for (const key in value) {
    const member: unknown = (value as Record<string, unknown>)[key];
    if (typeof member === 'object' && member !== null) {
      if (!isPlainContainer(member, next, maxDepth)) return false;
    } else if (typeof member === 'bigint') return false;
  }
  return true;
}

/** One encoder walk: the objects on the current path (cycle check) and the depth bound. */
interface Walk {
  readonly seen: Set<object>;
  readonly maxDepth: number;
}

function encode(value: unknown, walk: Walk, depth: number): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') {
      return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
    }
    return value;
  }
  // Bounded like JSON input, so a deep result is an error with a reason rather than a stack overflow.
  if (depth >= walk.maxDepth) throw tooDeep(walk.maxDepth);
  const next = depth + 1;
  const seen = walk.seen;
  if (seen.has(value)) throw new TypeError('defaultJsonEncoder: the value contains a circular reference');
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => encodeMember(v, walk, next));
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      return plainArray(value as unknown as ArrayLike<number | bigint>, (v) => encode(v, walk, next));
    }
    for (const rule of rules) if (rule.test(value)) return encode(rule.encode(value), walk, next);
    if (value instanceof Map) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of value) {
        const encoded = encode(v, walk, next);
        if (encoded !== undefined) out[String(k)] = encoded;
      }
      return out;
    }
    if (value instanceof Set) return [...value].map((v) => encodeMember(v, walk, next));
    if (value instanceof Date) return value.toISOString();
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return encode(toJSON.call(value), walk, next);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const encoded = encode(v, walk, next);
      if (encoded !== undefined && typeof encoded !== 'function' && typeof encoded !== 'symbol') {
        out[k] = encoded;
      }
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** Array members that JSON cannot carry become null, as JSON.stringify does. */
function encodeMember(value: unknown, walk: Walk, depth: number): unknown {
  const encoded = encode(value, walk, depth);
  return encoded === undefined || typeof encoded === 'function' || typeof encoded === 'symbol'
    ? null
    : encoded;
}
