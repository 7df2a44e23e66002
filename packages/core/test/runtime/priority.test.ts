import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quantized, timeoutOfField } from '../../src/runtime/admission/client-timeout.js';
import { urgencyOf, urgencyOfValue } from '../../src/runtime/admission/priority.js';

describe('the RFC 9218 Priority field', () => {
  it.each([
    ['u=0', 0],
    ['u=7', 7],
    ['u=5, i', 5],
    ['i, u=1', 1],
    ['i=?1, u=2;foo=bar', 2],
    ['u=1, u=6', 6],
    ['  u=4  ', 4],
    ['u=2,\tx="a \\"b\\"", y=:AQID:, z=(1 2 "c");p, w=tok/en*', 2],
  ])('reads %j as urgency %s', (field, urgency) => {
    expect(urgencyOf(field)).toBe(urgency);
  });

  it.each([
    'u=8',
    'u=-1',
    'u=99',
    'u=1.0',
    'u="1"',
    'u=?1',
    'U=1',
    'u=1,',
    'u=1,,i',
    'u=1 i',
    'u=(1)',
    'u=1;',
    'x="unterminated, u=1',
    'u=1234567890123456',
    '',
  ])('ignores %j (no urgency)', (field) => {
    expect(urgencyOf(field)).toBeUndefined();
  });

  it('ignores a field longer than any Priority field needs', () => {
    expect(urgencyOf(`u=0, ${'a'.repeat(2000)}`)).toBeUndefined();
  });

  it('never throws and never answers outside 0..7, whatever the field', () => {
    const pieces = fc.constantFrom(
      'u',
      '=',
      ',',
      ' ',
      ';',
      '"',
      '(',
      ')',
      ':',
      '?',
      '1',
      '0',
      '7',
      '-',
      '.',
      'i',
      '\\',
      '\t',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 64 }),
          fc.array(pieces, { maxLength: 32 }).map((a) => a.join('')),
        ),
        (field) => {
          const u = urgencyOf(field);
          expect(u === undefined || (Number.isInteger(u) && u >= 0 && u <= 7)).toBe(true);
        },
      ),
    );
  });

  it('reads v2 parameters.priority as an integer 0..7, anything else ignored', () => {
    expect([0, 7, 3].map(urgencyOfValue)).toEqual([0, 7, 3]);
    expect([8, -1, 1.5, '1', null, true, Number.NaN].map(urgencyOfValue)).toEqual(
      new Array(7).fill(undefined),
    );
  });
});

describe('Tiffin-Timeout', () => {
  it('reads plain seconds, cut to two significant digits (never longer than asked)', () => {
    expect(timeoutOfField('2.5')).toBe(2.5);
    expect(timeoutOfField('30')).toBe(30);
    expect(timeoutOfField('2.537')).toBeCloseTo(2.5, 9);
    expect(timeoutOfField(' 0.0417 ')).toBeCloseTo(0.041, 9);
    expect(timeoutOfField(undefined)).toBeUndefined();
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1e6, noNaN: true }), (s) => {
        const q = quantized(s);
        expect(q > 0 && q <= s * (1 + 1e-9)).toBe(true);
      }),
    );
  });
});
