import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUtf8 } from '../../src/encoding/utf8.js';
import { isTiffinError } from '../../src/index.js';

// The body decoder checks strictly only when the decoded text holds a U+FFFD: it must still refuse every invalid
// body and decode every valid one exactly as a fatal TextDecoder does (which keeps a literal U+FFFD).
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Bytes biased towards what breaks UTF-8: lone continuation bytes, truncated and overlong sequences. */
const hostileBytes = fc.array(
  fc.oneof(
    fc.integer({ min: 0x00, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0xbf }),
    fc.integer({ min: 0xc0, max: 0xff }),
    fc.constantFrom(0xef, 0xbf, 0xbd, 0xed, 0xa0, 0xf4, 0x90),
  ),
  { maxLength: 24 },
);

function outcome(bytes: Uint8Array): string | 'refused' {
  try {
    return decodeUtf8(bytes, 'body');
  } catch (err) {
    if (!isTiffinError(err)) throw err;
    expect(err.errorCode).toBe(400);
    return 'refused';
  }
}

describe('decodeUtf8', () => {
  it('refuses exactly what a fatal TextDecoder refuses, and decodes the rest the same', () => {
    fc.assert(
      fc.property(hostileBytes, (list) => {
        const bytes = Uint8Array.from(list);
        let expected: string | 'refused';
        try {
          expected = strict.decode(bytes);
        } catch {
          expected = 'refused';
        }
        expect(outcome(bytes)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps a U+FFFD the client sent, and names the first bad byte of an invalid body', () => {
    expect(decodeUtf8(Buffer.from('a\uFFFDb é', 'utf8'), 'body')).toBe('a\uFFFDb é');
    expect(() => decodeUtf8(Buffer.from([0x61, 0xef, 0xbf, 0xbd, 0xc3]), 'The body')).toThrow(
      'The body is not valid UTF-8 (invalid byte at offset 4)',
    );
    // A surrogate encoded in UTF-8 (CESU-8) and an overlong slash are invalid too.
    expect(outcome(Uint8Array.from([0xed, 0xa0, 0x80]))).toBe('refused');
    expect(outcome(Uint8Array.from([0xc0, 0xaf]))).toBe('refused');
    // A leading byte-order mark is dropped.
    expect(decodeUtf8(Buffer.from('\uFEFF{}', 'utf8'), 'body')).toBe('{}');
  });
});
