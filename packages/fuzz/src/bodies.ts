import { crc32, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { bmpBomb, parquetRleBomb } from './declared-sizes.js';

/** A body and the Content-Type it is sent with (null: no header). */
export interface Payload {
  /** Short label for reports, e.g. `json/deep`. */
  kind: string;
  contentType: string | null;
  body: Buffer;
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** Text that parses as JSON, JSON that does not, and JSON shaped to hurt (depth, size, odd numbers). */
export const jsonText: fc.Arbitrary<{ kind: string; body: Buffer }> = fc.oneof(
  fc.json({ maxDepth: 6 }).map((s) => ({ kind: 'json/valid', body: utf8(s) })),
  fc
    .record({ depth: fc.integer({ min: 1, max: 20_000 }), open: fc.constantFrom('[', '{"a":', '[1,{"b":') })
    .map(({ depth, open }) => ({
      kind: 'json/deep',
      body: utf8(
        `${open.repeat(depth)}1${(open === '[' ? ']' : open === '{"a":' ? '}' : '}]').repeat(depth)}`,
      ),
    })),
  fc
    .tuple(fc.json({ maxDepth: 4 }), fc.nat())
    .map(([s, cut]) => ({ kind: 'json/truncated', body: utf8(s.slice(0, cut % (s.length + 1))) })),
  fc.uint8Array({ maxLength: 256 }).map((b) => ({ kind: 'json/bytes', body: Buffer.from(b) })),
  fc
    .array(
      fc.constantFrom(
        '1e400',
        '-0',
        'NaN',
        'Infinity',
        '-Infinity',
        '18446744073709551616',
        '9223372036854775808',
        '1.5',
        '"\\ud800"',
        'null',
        'true',
        '"x"',
        '[]',
        '{}',
        '[1,[2]]',
      ),
      { minLength: 0, maxLength: 8 },
    )
    .map((cells) => ({ kind: 'json/numbers', body: utf8(`[${cells.join(',')}]`) })),
  fc
    .array(fc.dictionary(fc.constantFrom('a', 'b', 'c', ''), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }), {
      maxLength: 6,
    })
    .map((rows) => ({ kind: 'json/records', body: utf8(JSON.stringify(rows)) })),
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.json({ maxDepth: 2 })).map(([bad, s]) => ({
    kind: 'json/invalid-utf8',
    body: Buffer.concat([utf8(s.slice(0, 1)), Buffer.from(bad.map((b) => b | 0x80)), utf8(s.slice(1))]),
  })),
);

/** CSV: quoting, ragged rows, unterminated quotes, odd cells. */
export const csvText: fc.Arbitrary<{ kind: string; body: Buffer }> = fc.oneof(
  fc
    .array(fc.array(fc.stringMatching(/^[a-z0-9 ."',\r\n-]{0,12}$/), { maxLength: 5 }), { maxLength: 8 })
    .map((rows) => ({ kind: 'csv/cells', body: utf8(rows.map((r) => r.join(',')).join('\n')) })),
  fc.string({ maxLength: 200 }).map((s) => ({ kind: 'csv/string', body: utf8(`a,b\n"${s}`) })),
  fc
    .array(fc.constantFrom('1', '1.5', 'nan', 'inf', '99999999999999999999', 'True', '', '"x,y"', '[1]'), {
      maxLength: 10,
    })
    .map((cells) => ({ kind: 'csv/typed', body: utf8(`a\n${cells.join('\n')}\n`) })),
);

/** Parquet-looking bytes: magic numbers around garbage, footer lengths that lie, RLE runs that declare millions. */
export const parquetBytes: fc.Arbitrary<{ kind: string; body: Buffer }> = fc.oneof(
  fc
    .record({
      footerRows: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      pageValues: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    })
    .map((shape) => ({ kind: 'parquet/rle-bomb', body: parquetRleBomb(shape) })),
  fc.uint8Array({ maxLength: 512 }).map((b) => ({
    kind: 'parquet/garbage',
    body: Buffer.concat([utf8('PAR1'), Buffer.from(b), utf8('PAR1')]),
  })),
  fc.tuple(fc.uint8Array({ maxLength: 64 }), fc.integer()).map(([b, len]) => {
    const footer = Buffer.alloc(4);
    footer.writeInt32LE(len);
    return {
      kind: 'parquet/footer-lie',
      body: Buffer.concat([utf8('PAR1'), Buffer.from(b), footer, utf8('PAR1')]),
    };
  }),
);

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/** A PNG of `width`×`height` RGB whose pixel data is `rows` zero-filled rows (0 for a bomb: a huge size, no pixels). */
export function png(width: number, height: number, rows = height): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc(Math.min(rows, height) * (width * 3 + 1));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Images: small valid ones, truncated ones, bombs (huge declared size, tiny file), garbage under image types. */
export const imageBytes: fc.Arbitrary<{ kind: string; body: Buffer }> = fc.oneof(
  fc
    .record({ w: fc.integer({ min: 1, max: 32 }), h: fc.integer({ min: 1, max: 32 }) })
    .map(({ w, h }) => ({ kind: 'image/png', body: png(w, h) })),
  fc
    .record({ w: fc.integer({ min: 1, max: 32 }), h: fc.integer({ min: 1, max: 32 }), cut: fc.nat() })
    .map(({ w, h, cut }) => {
      const full = png(w, h);
      return { kind: 'image/truncated', body: full.subarray(0, cut % full.length) };
    }),
  fc
    .record({
      w: fc.integer({ min: 20_000, max: 2 ** 31 - 1 }),
      h: fc.integer({ min: 20_000, max: 2 ** 31 - 1 }),
    })
    .map(({ w, h }) => ({ kind: 'image/bomb', body: png(w, h, 0) })),
  fc.uint8Array({ maxLength: 256 }).map((b) => ({ kind: 'image/garbage', body: Buffer.from(b) })),
  fc
    .record({
      width: fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.constantFrom(0xffffffff, 9456, 1)),
      height: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      compression: fc.constantFrom(0 as const, 1 as const),
    })
    .map((shape) => ({ kind: 'image/bmp-bomb', body: bmpBomb(shape) })),
  fc.uint8Array({ maxLength: 64 }).map((b) => ({
    kind: 'image/bmp-header',
    body: Buffer.concat([utf8('BM'), Buffer.from(b)]),
  })),
);

/** Content types: right, wrong, malformed, absent, huge, non-ASCII. */
export function contentTypeFor(right: readonly string[]): fc.Arbitrary<string | null> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...right) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'application/json',
        'text/plain; charset=latin1',
        'text/csv',
        'application/vnd.apache.parquet',
        'image/png',
        'image/jpeg',
        'application/octet-stream',
        'multipart/form-data',
        'multipart/form-data; boundary=',
        'multipart/form-data; boundary="unterminated',
        '*/*',
        'application/json; charset=utf-16',
      ),
    },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.stringMatching(/^[\x20-\x7e\x80-\xff]{0,40}$/) },
    { weight: 1, arbitrary: fc.constant(`text/plain; x=${'a'.repeat(10_000)}`) },
  );
}

interface PartSpec {
  name: string;
  filename: string | null;
  filenameStar: boolean;
  contentType: string | null;
  content: Buffer;
}

const partName = fc.oneof(
  fc.constantFrom('meta', 'doc', 'note', ''),
  fc.string({ maxLength: 20, unit: 'grapheme' }),
  fc.constant('n'.repeat(3000)),
);
const fileName = fc.oneof(
  fc.constant(null),
  fc.constantFrom('a.csv', '€.png', '日本語.txt', 'a"b.txt', '../../etc/passwd', 'C:\\x\\y.bin', ''),
  fc.string({ maxLength: 30, unit: 'grapheme' }),
  fc.constant('f'.repeat(5000)),
);
const part: fc.Arbitrary<PartSpec> = fc.record({
  name: partName,
  filename: fileName,
  filenameStar: fc.boolean(),
  contentType: fc.oneof(fc.constant(null), fc.constantFrom('text/csv', 'application/json', 'image/png', 'x')),
  content: fc.oneof(
    fc.json({ maxDepth: 3 }).map(utf8),
    fc.uint8Array({ maxLength: 128 }).map((b) => Buffer.from(b)),
    fc.constant(utf8('--boundary\r\n')),
  ),
});

function encodePart(boundary: string, p: PartSpec): Buffer {
  let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
  if (p.filename !== null) {
    head += p.filenameStar
      ? `; filename*=UTF-8''${encodeURIComponent(p.filename)}`
      : `; filename="${p.filename}"`;
  }
  if (p.contentType) head += `\r\nContent-Type: ${p.contentType}`;
  return Buffer.concat([utf8(`${head}\r\n\r\n`), p.content, utf8('\r\n')]);
}

/** multipart/form-data bodies: valid and broken framing, odd names and file names, too many parts. */
export const multipartPayload: fc.Arbitrary<Payload> = fc.oneof(
  fc
    .record({
      boundary: fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/),
      parts: fc.array(part, { maxLength: 6 }),
      cut: fc.option(fc.nat()),
      closing: fc.boolean(),
    })
    .map(({ boundary, parts, cut, closing }) => {
      let body = Buffer.concat([
        ...parts.map((p) => encodePart(boundary, p)),
        utf8(closing ? `--${boundary}--\r\n` : ''),
      ]);
      if (cut !== null) body = body.subarray(0, cut % (body.length + 1));
      return {
        kind: cut !== null ? 'multipart/truncated' : closing ? 'multipart/valid' : 'multipart/unterminated',
        contentType: `multipart/form-data; boundary=${JSON.stringify(boundary)}`,
        body,
      };
    }),
  fc.integer({ min: 900, max: 1500 }).map((n) => {
    const one = encodePart('b', {
      name: 'x',
      filename: null,
      filenameStar: false,
      contentType: null,
      content: utf8('1'),
    });
    return {
      kind: 'multipart/many-parts',
      contentType: 'multipart/form-data; boundary=b',
      body: Buffer.concat([...Array.from({ length: n }, () => one), utf8('--b--\r\n')]),
    };
  }),
  fc.integer({ min: 10_000, max: 40_000 }).map((n) => ({
    kind: 'multipart/huge-part-header',
    contentType: 'multipart/form-data; boundary=b',
    body: utf8(
      `--b\r\nContent-Disposition: form-data; name="doc"; filename="a"\r\nX: ${'h'.repeat(n)}\r\n\r\n1\r\n--b--\r\n`,
    ),
  })),
);
