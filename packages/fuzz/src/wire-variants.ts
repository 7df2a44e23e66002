import fc from 'fast-check';

/** A case of raw message bytes, labelled for the report. */
export interface ByteCase {
  kind: string;
  bytes: Buffer;
}

/**
 * Messages from `messages` as bytes, as they are and spoiled: well-formed, truncated at any point, and with a
 * few bytes overwritten (`<prefix>/message`, `/truncated`, `/mutated`).
 */
export function wireVariants<M>(
  messages: fc.Arbitrary<M>,
  encode: (message: M) => Buffer,
  prefix: string,
): fc.Arbitrary<ByteCase> {
  return fc.oneof(
    messages.map((m) => ({ kind: `${prefix}/message`, bytes: encode(m) })),
    fc.tuple(messages, fc.nat()).map(([m, cut]) => {
      const bytes = encode(m);
      return { kind: `${prefix}/truncated`, bytes: bytes.subarray(0, cut % (bytes.length + 1)) };
    }),
    fc
      .tuple(
        messages,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      )
      .map(([m, flips]) => {
        const bytes = Buffer.from(encode(m));
        for (const [at, value] of flips) if (bytes.length > 0) bytes[at % bytes.length] = value;
        return { kind: `${prefix}/mutated`, bytes };
      }),
  );
}
