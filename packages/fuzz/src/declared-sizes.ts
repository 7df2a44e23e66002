/*
 * Small bodies that declare huge sizes: shapes that once held the server, as builders (the tests send them as they
 * are) and as arbitraries (the fuzzer varies the declared sizes). Every one is a few hundred bytes.
 */

/** Thrift compact protocol, writing side: just what a Parquet footer and page headers need. */
type Thrift =
  | { i32: number }
  | { i64: number }
  | { bin: string | Buffer }
  | { list: Thrift[]; of: 'i32' | 'bin' | 'struct' }
  | { struct: Record<number, Thrift> };

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);

const TYPE = { i32: 5, i64: 6, bin: 8, list: 9, struct: 12 } as const;

function typeOf(v: Thrift): number {
  if ('i32' in v) return TYPE.i32;
  if ('i64' in v) return TYPE.i64;
  if ('bin' in v) return TYPE.bin;
  if ('list' in v) return TYPE.list;
  return TYPE.struct;
}

function body(v: Thrift): number[] {
  if ('i32' in v) return varint(zigzag(v.i32));
  if ('i64' in v) return varint(zigzag(v.i64));
  if ('bin' in v) {
    const bytes = typeof v.bin === 'string' ? Buffer.from(v.bin) : v.bin;
    return [...varint(bytes.length), ...bytes];
  }
  if ('list' in v) {
    const element = TYPE[v.of];
    const head =
      v.list.length < 15 ? [(v.list.length << 4) | element] : [0xf0 | element, ...varint(v.list.length)];
    return [...head, ...v.list.flatMap(body)];
  }
  const out: number[] = [];
  let last = 0;
  for (const [key, value] of Object.entries(v.struct).sort(([a], [b]) => Number(a) - Number(b))) {
    const id = Number(key);
    const delta = id - last;
    if (delta > 0 && delta < 16) out.push((delta << 4) | typeOf(value));
    else out.push(typeOf(value), ...varint(zigzag(id)));
    last = id;
    out.push(...body(value));
  }
  out.push(0);
  return out;
}

const struct = (fields: Record<number, Thrift>): Thrift => ({ struct: fields });

export interface ParquetBombShape {
  /** Rows the footer declares (num_rows of the file, the row group and the column chunk). */
  footerRows: number;
  /** Values the data page header declares (one RLE run of them). */
  pageValues: number;
  /** Zero bytes between the magic and the first page (a bigger file, for limits that scale with its size). */
  padding?: number;
}

/**
 * A Parquet file of one required INT32 column, RLE-dictionary encoded: a one-entry dictionary and one RLE run
 * of `pageValues` copies of it, so it stays under 200 bytes for any count (184 bytes for 60 M rows).
 * Footer and page header may disagree, as a hostile file's may.
 */
export function parquetRleBomb({ footerRows, pageValues, padding = 0 }: ParquetBombShape): Buffer {
  const dictionaryData = Buffer.alloc(4); // the one value: 0
  const dictionaryHeader = Buffer.from(
    body(
      struct({
        1: { i32: 2 }, // DICTIONARY_PAGE
        2: { i32: dictionaryData.length },
        3: { i32: dictionaryData.length },
        7: struct({ 1: { i32: 1 }, 2: { i32: 0 } }), // 1 value, PLAIN
      }),
    ),
  );
  // Bit width 1, then one RLE run: header (count << 1), value byte 0.
  const pageData = Buffer.from([1, ...varint(pageValues * 2), 0]);
  const dataHeader = Buffer.from(
    body(
      struct({
        1: { i32: 0 }, // DATA_PAGE
        2: { i32: pageData.length },
        3: { i32: pageData.length },
        5: struct({ 1: { i32: pageValues }, 2: { i32: 8 }, 3: { i32: 3 }, 4: { i32: 3 } }), // RLE_DICTIONARY
      }),
    ),
  );
  const dictionaryOffset = 4 + padding;
  const dataOffset = dictionaryOffset + dictionaryHeader.length + dictionaryData.length;
  const chunkBytes = dataOffset + dataHeader.length + pageData.length - dictionaryOffset;
  const metadata = Buffer.from(
    body(
      struct({
        1: { i32: 1 },
        2: {
          of: 'struct',
          list: [
            struct({ 4: { bin: 'schema' }, 5: { i32: 1 } }),
            struct({ 1: { i32: 1 }, 3: { i32: 0 }, 4: { bin: 'a' } }), // INT32, REQUIRED
          ],
        },
        3: { i64: footerRows },
        4: {
          of: 'struct',
          list: [
            struct({
              1: {
                of: 'struct',
                list: [
                  struct({
                    2: { i64: dictionaryOffset },
                    3: struct({
                      1: { i32: 1 },
                      2: { of: 'i32', list: [{ i32: 0 }, { i32: 8 }] },
                      3: { of: 'bin', list: [{ bin: 'a' }] },
                      4: { i32: 0 }, // UNCOMPRESSED
                      5: { i64: footerRows },
                      6: { i64: chunkBytes },
                      7: { i64: chunkBytes },
                      9: { i64: dataOffset },
                      11: { i64: dictionaryOffset },
                    }),
                  }),
                ],
              },
              2: { i64: chunkBytes },
              3: { i64: footerRows },
            }),
          ],
        },
      }),
    ),
  );
  const length = Buffer.alloc(4);
  length.writeUInt32LE(metadata.length);
  const magic = Buffer.from('PAR1');
  return Buffer.concat([
    magic,
    Buffer.alloc(padding),
    dictionaryHeader,
    dictionaryData,
    dataHeader,
    pageData,
    metadata,
    length,
    magic,
  ]);
}

export interface BmpShape {
  /** The width field, written as its 32 bits (0xFFFFFFFF is -1 signed, 4 G unsigned). */
  width: number;
  /** The height field (negative: top-down rows). */
  height: number;
  /** 1 = BI_RLE8 (8-bit palette, pixel data: one end-of-bitmap), 0 = BI_RGB 24-bit (no pixel data at all). */
  compression: 0 | 1;
}

/**
 * A BMP whose header declares `width` × `height` pixels and whose pixel data is empty or one RLE8 end-of-bitmap
 * marker: 1,080 bytes for RLE8 whatever the size (9456×9456 decoded to 780 MB).
 */
export function bmpBomb({ width, height, compression }: BmpShape): Buffer {
  const palette = compression === 1 ? 256 * 4 : 0;
  const pixels = compression === 1 ? Buffer.from([0, 1]) : Buffer.alloc(0);
  const offset = 14 + 40 + palette;
  const file = Buffer.alloc(offset + pixels.length);
  file.write('BM', 0, 'latin1');
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(offset, 10);
  file.writeUInt32LE(40, 14);
  file.writeUInt32LE(width >>> 0, 18);
  file.writeInt32LE(height | 0, 22);
  file.writeUInt16LE(1, 26);
  file.writeUInt16LE(compression === 1 ? 8 : 24, 28);
  file.writeUInt32LE(compression, 30);
  file.writeUInt32LE(pixels.length, 34);
  if (compression === 1) file.writeUInt32LE(256, 46);
  pixels.copy(file, offset);
  return file;
}
