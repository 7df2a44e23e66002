import { createHash, type Hash as NodeHash } from 'node:crypto';

/**
 * The digest fed in pieces: short text is gathered and hashed in one update per 8 KiB (one `update` per value
 * would cost more than the walk itself), bytes go straight in.
 */
class Hash {
  private readonly hash: NodeHash = createHash('sha256');
  private pending = '';

  update(part: string | Uint8Array): void {
    if (typeof part === 'string') {
      this.pending += part;
      if (this.pending.length >= 8192) this.flush();
      return;
    }
    this.flush();
    this.hash.update(part);
  }

  digest(): string {
    this.flush();
    return this.hash.digest('hex');
  }

  private flush(): void {
    if (this.pending === '') return;
    // UTF-16 code units, as JavaScript holds text: lossless for a lone surrogate (UTF-8 would make it U+FFFD).
    this.hash.update(this.pending, 'utf16le');
    this.pending = '';
  }
}

/** Deepest nesting and most values a decoded input may have to be cached; past them it is not (no key). */
const MAX_DEPTH = 64;
const MAX_NODES = 100_000;

/**
 * The cache key of one call: a SHA-256 digest (64 hex characters, whatever the input's size) of the service's
 * name and version, the API and the decoded input in a canonical form: object keys sorted, so two spellings of
 * one JSON value are one key; every value tagged with its type and length, so no two values share a form
 * (`"1"` and `1`, `[1,2]` and `[[1],2]`, a Float32Array and the same bytes as Uint8Array). Undefined when the
 * input has a part with no canonical form (a function, a stream, a symbol) or is deeper or larger than bounded:
 * then the call is not cached.
 */
export function cacheKey(service: string, version: string, api: string, input: unknown): string | undefined {
  const hash = new Hash();
  for (const part of [service, version, api]) text(hash, part);
  const budget = { nodes: 0 };
  if (!feed(hash, input, 0, budget)) return undefined;
  return hash.digest();
}

/** The service's version with the API's own (`cache.version`: a model's tag, its files' fingerprint). */
export function versionOf(service: string, own: string | (() => string) | undefined): string {
  if (own === undefined) return service;
  return `${service}/${typeof own === 'function' ? own() : own}`;
}

function text(hash: Hash, value: string): void {
  // The length delimits the text: no two texts share a form.
  hash.update(`s${value.length}:${value}`);
}

function feed(hash: Hash, value: unknown, depth: number, budget: { nodes: number }): boolean {
  if (++budget.nodes > MAX_NODES || depth > MAX_DEPTH) return false;
  switch (typeof value) {
    case 'undefined':
      hash.update('u');
      return true;
    case 'boolean':
      hash.update(value ? 't' : 'f');
      return true;
    case 'number':
      // Object.is tells -0 from 0; String keeps every double exactly (shortest round-trip form).
      hash.update(`n${Object.is(value, -0) ? '-0' : String(value)};`);
      return true;
    case 'bigint':
      hash.update(`b${value.toString()};`);
      return true;
    case 'string':
      text(hash, value);
      return true;
    case 'object':
      if (value !== null) return feedObject(hash, value, depth, budget);
      hash.update('z');
      return true;
    default:
      return false;
  }
}

function feedObject(hash: Hash, value: object, depth: number, budget: { nodes: number }): boolean {
  if (ArrayBuffer.isView(value)) {
    hash.update(`v${value.constructor.name}:${value.byteLength}:`);
    hash.update(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    return true;
  }
  if (value instanceof ArrayBuffer) {
    hash.update(`B${value.byteLength}:`);
    hash.update(new Uint8Array(value));
    return true;
  }
  if (Array.isArray(value)) {
    hash.update(`a${value.length}[`);
    for (const item of value) if (!feed(hash, item, depth + 1, budget)) return false;
    hash.update(']');
    return true;
  }
  if (value instanceof Map) {
    const keys = [...value.keys()];
    if (!keys.every((k) => typeof k === 'string')) return false;
    return feedEntries(
      hash,
      'M',
      (keys as string[]).sort().map((k) => [k, value.get(k)]),
      depth,
      budget,
    );
  }
  // A stream or a file handle has no canonical form: the call is not cached.
  if (Symbol.asyncIterator in value || typeof (value as { then?: unknown }).then === 'function') return false;
  if (value instanceof Date) {
    hash.update(`d${value.getTime()};`);
    return true;
  }
  const keys = Object.keys(value).sort();
  const proto = Object.getPrototypeOf(value);
  const plain = proto === Object.prototype || proto === null;
  // A class instance whose state is not in its own fields (private fields, a native handle) cannot be told
  // from another of its class: not cached. Instances like NDArray keep their state in public fields.
  if (!plain && keys.length === 0) return false;
  const name = plain ? '' : ((value.constructor as { name?: string } | undefined)?.name ?? '?');
  return feedEntries(
    hash,
    `o${name}`,
    keys.map((k) => [k, (value as Record<string, unknown>)[k]]),
    depth,
    budget,
  );
}

function feedEntries(
  hash: Hash,
  tag: string,
  entries: Array<[string, unknown]>,
  depth: number,
  budget: { nodes: number },
): boolean {
  hash.update(`${tag}${entries.length}{`);
  for (const [key, item] of entries) {
    text(hash, key);
    if (!feed(hash, item, depth + 1, budget)) return false;
  }
  hash.update('}');
  return true;
}
