/**
 * The event-stream reader against what a server may send: any events with any of the three line endings, cut
 * into chunks at any byte (inside a `\r\n`, inside a multi-byte character), comments and unknown fields; and
 * streams that never end a line or an event, which must end in the client's `protocol` error, not in unbounded
 * memory.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTiffinClientError } from '../src/errors.js';
import { readEvents } from '../src/sse.js';
import type { SseMessage } from '../src/wire.js';

/** A body stream of `bytes` cut at `cuts` (offsets in any order). */
function streamOf(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    if (to > from) pieces.push(bytes.slice(from, to));
    from = Math.max(from, to);
  }
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>, max?: number): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const message of readEvents(stream, max)) out.push(message);
  return out;
}

/** Field text: no line breaks (they end a line), anything else, non-ASCII included. */
const fieldText = fc
  .string({ unit: 'grapheme', maxLength: 12 })
  .map((s) => s.replace(/[\r\n]/g, ''))
  .filter((s) => !s.startsWith(' '));

const message = fc.record({
  event: fc.option(fieldText.filter((s) => s !== '')),
  lines: fc.array(fieldText, { minLength: 1, maxLength: 3 }),
  id: fc.option(fieldText.filter((s) => !s.includes('\0'))),
  comment: fc.option(fieldText),
});

describe('readEvents', () => {
  it('reads any events, any line endings, cut at any byte', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { maxLength: 5 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (messages, eol, cuts) => {
          const text = messages
            .map((m) =>
              [
                ...(m.comment !== null ? [`:${m.comment}`] : []),
                ...(m.event !== null ? [`event: ${m.event}`] : []),
                ...m.lines.map((l) => `data: ${l}`),
                ...(m.id !== null ? [`id: ${m.id}`] : []),
                'retry: 10',
                '',
              ].join(eol),
            )
            .join(eol);
          const got = await collect(streamOf(new TextEncoder().encode(text + eol), cuts));
          // `id` is the last id seen, carried to later events, as the event-stream rules say.
          let lastId: string | undefined;
          const expected = messages.map((m) => {
            if (m.id !== null) lastId = m.id;
            return { event: m.event ?? 'message', data: m.lines.join('\n'), id: lastId };
          });
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a line that never ends, or an event that never ends, is a protocol error at the bound', async () => {
    const endlessLine = new TextEncoder().encode(`data: ${'x'.repeat(5000)}`);
    const endlessEvent = new TextEncoder().encode('data: xxxxxxxxx\n'.repeat(500));
    for (const bytes of [endlessLine, endlessEvent]) {
      const error = await collect(streamOf(bytes, [100, 2000, 4000, 6000]), 1000).catch((e: unknown) => e);
      expect(isTiffinClientError(error) && error.kind).toBe('protocol');
    }
    // Within the bound, the same event is read.
    const fits = new TextEncoder().encode(`data: ${'x'.repeat(900)}\n\n`);
    expect(await collect(streamOf(fits, [10, 500]), 1000)).toEqual([
      { event: 'message', data: 'x'.repeat(900), id: undefined },
    ]);
  });
});
