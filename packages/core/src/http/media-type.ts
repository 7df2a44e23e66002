/** A parsed media type (docs/spec/io-descriptors.md D2): type/subtype compared case-insensitively, parameters kept apart. */
export interface MediaType {
  /** `type/subtype`, lower-cased, e.g. `text/csv`. */
  readonly essence: string;
  readonly type: string;
  readonly subtype: string;
  /** Parameter names lower-cased; values unquoted. */
  readonly parameters: Readonly<Record<string, string>>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parse a Content-Type value. Returns null for a missing or malformed header. */
export function parseMediaType(header: string | null | undefined): MediaType | null {
  if (!header) return null;
  const [head = '', ...rest] = splitParams(header);
  const slash = head.indexOf('/');
  if (slash <= 0) return null;
  const type = head.slice(0, slash).trim().toLowerCase();
  const subtype = head
    .slice(slash + 1)
    .trim()
    .toLowerCase();
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return null;
  const parameters: Record<string, string> = {};
  for (const param of rest) {
    const eq = param.indexOf('=');
    if (eq <= 0) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    let value = param.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    if (name && !(name in parameters)) parameters[name] = value;
  }
  return { essence: `${type}/${subtype}`, type, subtype, parameters };
}

/** Split on `;` outside double quotes. */
function splitParams(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === '"' && value[i - 1] !== '\\') quoted = !quoted;
    if (ch === ';' && !quoted) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s, i) => i === 0 || s.length > 0);
}

/** True when `mediaType` matches `pattern` (`image/*`, `*\/*` and exact essences). */
export function mediaTypeMatches(mediaType: MediaType | string | null, pattern: string): boolean {
  const mt = typeof mediaType === 'string' ? parseMediaType(mediaType) : mediaType;
  if (!mt) return false;
  const p = pattern.trim().toLowerCase();
  if (p === '*/*' || p === '*') return true;
  if (p.endsWith('/*')) return mt.type === p.slice(0, -2);
  return mt.essence === (parseMediaType(p)?.essence ?? p);
}

/** docs/spec/io-descriptors.md §1.3 rule 3: `text/*` without a charset gets `; charset=utf-8`. */
export function withDefaultCharset(mediaType: string): string {
  if (mediaType.toLowerCase().startsWith('text/') && !/charset=/i.test(mediaType)) {
    return `${mediaType}; charset=utf-8`;
  }
  return mediaType;
}
