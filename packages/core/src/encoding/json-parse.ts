import { BadInput } from '../errors/index.js';
import { checkJsonDepth } from '../limits/depth.js';
import { DEFAULT_LIMITS } from '../limits/limits.js';
import { JsonFloat } from './json-float.js';
import { decodeUtf8 } from './utf8.js';

export interface JsonParseOptions {
  /**
   * Keep integer literals beyond 2^53 exact (as bigint) and mark integral float literals (`2.0`) as
   * JsonFloat, so NDArray inference and int64/uint64 conversion see what was written (docs/spec/io-descriptors.md §1.5).
   * Off: numbers are JS numbers, like JSON.parse.
   */
  exact?: boolean;
  /** Accept the non-standard literals NaN, Infinity, -Infinity (docs/spec/io-descriptors.md §1.5; D3 makes them optional). */
  allowNonFinite?: boolean;
  /** Maximum nesting of arrays/objects (deeper → BadInput instead of a stack overflow); default `DEFAULT_LIMITS.maxDepth`. */
  maxDepth?: number;
}

/** A syntax error in a JSON document: message says what and where (line, column, char offset). */
export class JsonSyntaxError extends BadInput {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

/** Parse JSON bytes (UTF-8, BOM optional). Invalid UTF-8 or syntax → BadInput. */
export function parseJsonBytes(bytes: Uint8Array, options: JsonParseOptions = {}): unknown {
  return parseJson(decodeUtf8(bytes, 'JSON body'), options);
}

/**
 * Parse JSON text. Standard JSON, plus (by default) NaN/Infinity literals. Duplicate keys: the last value
 * wins at the first key's position. Without `exact`, JSON.parse does the work when it can (it is fast);
 * this parser runs for the non-standard literals and to give a positioned error message.
 */
export function parseJson(text: string, options: JsonParseOptions = {}): unknown {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (!options.exact) {
    let value: unknown;
    try {
      value = JSON.parse(src);
    } catch {
      // Fall through: NaN/Infinity, or a syntax error we report with a position.
      return new Parser(src, options).parseDocument();
    }
    const maxDepth = options.maxDepth ?? DEFAULT_LIMITS.maxDepth;
    // A document of n characters nests at most n/2 levels: most bodies are too short to need the walk.
    if (src.length > 2 * maxDepth) checkJsonDepth(value, src.length, maxDepth, 'The JSON document');
    return value;
  }
  return new Parser(src, options).parseDocument();
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const WS = /[ \t\n\r]*/y;

class Parser {
  private pos = 0;
  private depth = 0;
  private readonly exact: boolean;
  private readonly allowNonFinite: boolean;
  private readonly maxDepth: number;

  constructor(
    private readonly src: string,
    options: JsonParseOptions,
  ) {
    this.exact = options.exact ?? false;
    this.allowNonFinite = options.allowNonFinite ?? true;
    this.maxDepth = options.maxDepth ?? DEFAULT_LIMITS.maxDepth;
  }

  parseDocument(): unknown {
    this.skipWs();
    const value = this.parseValue();
    this.skipWs();
    if (this.pos < this.src.length) throw this.error('Extra data');
    return value;
  }

  private skipWs(): void {
    WS.lastIndex = this.pos;
    WS.test(this.src);
    this.pos = WS.lastIndex;
  }

  private error(what: string, at = this.pos): JsonSyntaxError {
    const before = this.src.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    return new JsonSyntaxError(`${what}: line ${line} column ${column} (char ${at})`, at);
  }

  private parseValue(): unknown {
    const c = this.src[this.pos];
    switch (c) {
      case '{':
        return this.parseObject();
      case '[':
        return this.parseArray();
      case '"':
        return this.parseString();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      case 'N':
        return this.nonFinite('NaN', Number.NaN);
      case 'I':
        return this.nonFinite('Infinity', Number.POSITIVE_INFINITY);
      default:
        if (c === '-' && this.src.startsWith('-Infinity', this.pos)) {
          return this.nonFinite('-Infinity', Number.NEGATIVE_INFINITY);
        }
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.parseNumber();
        throw this.error('Expecting value');
    }
  }

  private literal<T>(word: string, value: T): T {
    if (!this.src.startsWith(word, this.pos)) throw this.error('Expecting value');
    this.pos += word.length;
    return value;
  }

  private nonFinite(word: string, value: number): number {
    if (!this.allowNonFinite || !this.src.startsWith(word, this.pos)) throw this.error('Expecting value');
    this.pos += word.length;
    return value;
  }

  private parseNumber(): number | bigint | JsonFloat {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.src);
    if (!m) throw this.error('Expecting value');
    const text = m[0];
    this.pos += text.length;
    const isFloat = m[1] !== undefined || m[2] !== undefined;
    const n = Number(text);
    if (!this.exact) return n;
    if (isFloat) return Number.isInteger(n) ? new JsonFloat(n) : n;
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }

  private parseString(): string {
    const start = this.pos;
    this.pos++;
    let out = '';
    let chunkStart = this.pos;
    const src = this.src;
    for (;;) {
      const code = src.charCodeAt(this.pos);
      if (Number.isNaN(code)) throw this.error('Unterminated string starting at', start);
      if (code === 0x22) {
        out += src.slice(chunkStart, this.pos);
        this.pos++;
        return out;
      }
      if (code < 0x20) throw this.error('Invalid control character at');
      if (code === 0x5c) {
        out += src.slice(chunkStart, this.pos);
        out += this.parseEscape();
        chunkStart = this.pos;
        continue;
      }
      this.pos++;
    }
  }

  private parseEscape(): string {
    const esc = this.src[this.pos + 1];
    this.pos += 2;
    switch (esc) {
      case '"':
        return '"';
      case '\\':
        return '\\';
      case '/':
        return '/';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'u': {
        const hex = this.src.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw this.error('Invalid \\uXXXX escape', this.pos - 1);
        this.pos += 4;
        return String.fromCharCode(Number.parseInt(hex, 16));
      }
      default:
        throw this.error('Invalid \\escape', this.pos - 2);
    }
  }

  private enter(): void {
    if (++this.depth > this.maxDepth) throw this.error(`Nesting deeper than ${this.maxDepth} levels`);
  }

  private parseArray(): unknown[] {
    this.enter();
    this.pos++;
    const out: unknown[] = [];
    this.skipWs();
    if (this.src[this.pos] === ']') {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      out.push(this.parseValue());
      this.skipWs();
      const c = this.src[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === ']') {
        this.pos++;
        this.depth--;
        return out;
      }
      throw this.error("Expecting ',' delimiter");
    }
  }

  private parseObject(): Record<string, unknown> {
    this.enter();
    this.pos++;
    const out: Record<string, unknown> = {};
    this.skipWs();
    if (this.src[this.pos] === '}') {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.skipWs();
      if (this.src[this.pos] !== '"') throw this.error('Expecting property name enclosed in double quotes');
      const key = this.parseString();
      this.skipWs();
      if (this.src[this.pos] !== ':') throw this.error("Expecting ':' delimiter");
      this.pos++;
      this.skipWs();
      const value = this.parseValue();
      // An own property even for "__proto__", as JSON.parse does.
      Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      this.skipWs();
      const c = this.src[this.pos];
      if (c === ',') {
        this.pos++;
        continue;
      }
      if (c === '}') {
        this.pos++;
        this.depth--;
        return out;
      }
      throw this.error("Expecting ',' delimiter");
    }
  }
}
