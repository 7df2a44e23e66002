/**
 * The urgency of a call from the RFC 9218 `Priority` field (docs/spec/io-descriptors.md §10.9): a Structured
 * Field Dictionary (RFC 8941 §3.2) whose `u` member is an Integer from 0 (most urgent) to 7. A field that does
 * not parse is ignored as a whole, a `u` out of range or of another type is ignored (RFC 9218 §4.1), other
 * members are ignored: the call then has the default urgency, 3. Never an error for the client.
 */

/** The urgency of a call that names none (RFC 9218 §4.1). */
export const DEFAULT_URGENCY = 3;
/** The least urgent level; 0 is the most urgent. */
export const LOWEST_URGENCY = 7;
/** Longer fields are not read at all (a Priority field is a few bytes; this bounds the parse's work). */
const MAX_FIELD_LENGTH = 1024;

/** The urgency `field` names, or undefined when it names none that is valid. */
export function urgencyOf(field: string | undefined): number | undefined {
  if (field === undefined || field.length === 0 || field.length > MAX_FIELD_LENGTH) return undefined;
  const u = new DictionaryParser(field).member('u');
  return typeof u === 'number' && Number.isInteger(u) && u >= 0 && u <= LOWEST_URGENCY ? u : undefined;
}

/** An urgency given as a JSON value (v2 `parameters.priority`): an integer 0..7, else undefined. */
export function urgencyOfValue(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : Number.NaN;
  return Number.isInteger(n) && n >= 0 && n <= LOWEST_URGENCY ? n : undefined;
}

/** Thrown inside the parser when the field is not a Structured Field Dictionary. */
const INVALID = Symbol('invalid');

/** A bare item's value as far as this reader needs: numbers as numbers, anything else as `true`. */
type Item = number | true;

/**
 * A reader of one RFC 8941 Dictionary that keeps only the member asked for (the last one with that key wins,
 * RFC 8941 §3.2). Items it does not need (strings, tokens, byte sequences, inner lists, parameters) are
 * checked for syntax and skipped.
 */
class DictionaryParser {
  private i = 0;

  constructor(private readonly s: string) {}

  member(wanted: string): Item | undefined {
    try {
      return this.dictionary(wanted);
    } catch (err) {
      if (err === INVALID) return undefined;
      throw err;
    }
  }

  private dictionary(wanted: string): Item | undefined {
    let found: Item | undefined;
    this.skip(' ');
    while (this.i < this.s.length) {
      const key = this.key();
      let value: Item | undefined = true;
      if (this.s[this.i] === '=') {
        this.i++;
        value = this.s[this.i] === '(' ? this.innerList() : this.bareItem();
      }
      this.parameters();
      if (key === wanted) found = value;
      this.ows();
      if (this.i >= this.s.length) return found;
      if (this.s[this.i] !== ',') throw INVALID;
      this.i++;
      this.ows();
      if (this.i >= this.s.length) throw INVALID; // a trailing comma
    }
    return found;
  }

  private key(): string {
    const start = this.i;
    const first = this.s[this.i];
    if (first === undefined || !(first === '*' || (first >= 'a' && first <= 'z'))) throw INVALID;
    this.i++;
    while (this.i < this.s.length && /[a-z0-9_\-.*]/.test(this.s[this.i] as string)) this.i++;
    return this.s.slice(start, this.i);
  }

  private parameters(): void {
    while (this.s[this.i] === ';') {
      this.i++;
      this.skip(' ');
      this.key();
      if (this.s[this.i] === '=') {
        this.i++;
        this.bareItem();
      }
    }
  }

  private innerList(): undefined {
    this.i++; // '('
    for (;;) {
      this.skip(' ');
      if (this.s[this.i] === ')') {
        this.i++;
        return undefined;
      }
      this.bareItem();
      this.parameters();
      const next = this.s[this.i];
      if (next !== ' ' && next !== ')') throw INVALID;
    }
  }

  private bareItem(): Item {
    const c = this.s[this.i];
    if (c === undefined) throw INVALID;
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (c === '"') return this.string();
    if (c === '?') return this.boolean();
    if (c === ':') return this.bytes();
    if (c === '*' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return this.token();
    throw INVALID;
  }

  /** An Integer (at most 15 digits) as a number, a Decimal (at most 12 and 3 digits) as a non-integer marker. */
  private number(): Item {
    const match = /^-?(\d{1,15})(\.\d{1,3})?/.exec(this.s.slice(this.i, this.i + 20));
    if (!match) throw INVALID;
    const [text, whole, fraction] = match as unknown as [string, string, string | undefined];
    if (fraction !== undefined && whole.length > 12) throw INVALID;
    const next = this.s[this.i + text.length];
    if (next !== undefined && next >= '0' && next <= '9') throw INVALID; // more digits than allowed
    if (next === '.') throw INVALID;
    this.i += text.length;
    // A Decimal is never an urgency: answered as a non-integer, which the caller ignores.
    return fraction === undefined ? Number(text) : Number.NaN;
  }

  private string(): Item {
    this.i++;
    while (this.i < this.s.length) {
      const c = this.s[this.i++] as string;
      if (c === '"') return true;
      if (c === '\\') {
        const escaped = this.s[this.i++];
        if (escaped !== '"' && escaped !== '\\') throw INVALID;
      } else if (c < ' ' || c > '~') throw INVALID;
    }
    throw INVALID;
  }

  private boolean(): Item {
    const v = this.s[this.i + 1];
    if (v !== '0' && v !== '1') throw INVALID;
    this.i += 2;
    return true;
  }

  private bytes(): Item {
    const end = this.s.indexOf(':', this.i + 1);
    if (end < 0 || !/^[A-Za-z0-9+/=]*$/.test(this.s.slice(this.i + 1, end))) throw INVALID;
    this.i = end + 1;
    return true;
  }

  private token(): Item {
    this.i++;
    while (this.i < this.s.length && /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/.test(this.s[this.i] as string)) this.i++;
    return true;
  }

  private skip(c: string): void {
    while (this.s[this.i] === c) this.i++;
  }

  /** Optional whitespace around a member's comma (RFC 8941 §3.2: OWS, spaces and tabs). */
  private ows(): void {
    while (this.s[this.i] === ' ' || this.s[this.i] === '\t') this.i++;
  }
}
