import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { basicAuth } from '../../src/server/basic-auth.js';

// HTTP Basic against a `user:pass` list (RFC 7617), as A1111's --api-auth: only a listed pair opens, whatever else
// the header holds.
const LISTED = ['alice:wonder land', 'zoë:pä:ss'];
const check = basicAuth(LISTED);
const encoded = (pair: string) => `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;

describe('basicAuth', () => {
  it('opens for a listed pair only', () => {
    for (const pair of LISTED) expect(check(encoded(pair))).toBe(true);
    expect(check(`bAsIc ${Buffer.from(LISTED[0] as string).toString('base64')}`)).toBe(true);
    for (const other of ['alice:wonder', 'alice', 'zoë:pä', ':', '', 'alice:wonder land\0'])
      expect(check(encoded(other))).toBe(false);
    expect(check(undefined)).toBe(false);
    expect(check(null)).toBe(false);
  });

  it('answers any header value (random text, random base64 of any bytes) with false, never a throw', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 6000, unit: 'binary' }), (value) => {
        expect(check(value)).toBe(false);
        expect(check(`Basic ${value}`)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4000 }), (bytes) => {
        const pair = Buffer.from(bytes);
        const listed = LISTED.some((p) => Buffer.from(p, 'utf8').equals(pair));
        expect(check(`Basic ${pair.toString('base64')}`)).toBe(listed);
      }),
    );
  });
});
