import { BadInput, PayloadTooLarge } from '@tiffin/core';
import type { FileMetaData } from 'hyparquet';

/*
 * What a Parquet file declares, checked before hyparquet decodes it. hyparquet allocates each page from its
 * header's value count (`new Array(num_values)`) and each decompressed page from its header's size, so a
 * file of a few hundred bytes (one RLE run, one zstd frame) can ask for gigabytes. The footer's row counts
 * and every page header are read here first (page headers are Thrift compact structs, which hyparquet does
 * not export a reader for), and the file is refused when they declare more than the limits allow.
 */

/** Bytes of decompressed page data allowed per allowed value (a string cell averages well under this). */
const BYTES_PER_VALUE = 8;

/**
 * Beyond a first 65,536 values, at most `Limits.maxValuesPerByte` (16) values per byte of file: a
 * decompression-bomb ratio. Real tables stay far below it (numbers take bytes each, even dictionary-coded
 * categories a few bits); one RLE run of a repeated value does not (1 M rows in 178 bytes, 1.1 s and
 * 280 MB to decode and answer). A table costs about 115 bytes a cell once it is a DataFrame, so this keeps a
 * Parquet body's cost near a JSON one's.
 */
export const PARQUET_FREE_VALUES = 65_536;

export interface ParquetBudget {
  /** Most values (table cells) the file may declare: `Limits.maxElements`. */
  maxValues: number;
  /** Most values per byte of file beyond the first 65,536: `Limits.maxValuesPerByte`. */
  valuesPerByte: number;
  /** Who is asking, for messages. */
  owner: string;
}

/** Refuse (413) a file whose footer or page headers declare more values or bytes than the budget. */
export function checkParquetDeclaredSizes(
  file: ArrayBuffer,
  metadata: FileMetaData,
  leafColumns: number,
  budget: ParquetBudget,
): void {
  const maxValues = Math.min(budget.maxValues, PARQUET_FREE_VALUES + budget.valuesPerByte * file.byteLength);
  const { owner } = budget;
  const why =
    maxValues < budget.maxValues
      ? `${budget.valuesPerByte} values per byte of a ${file.byteLength}-byte file, limit maxValuesPerByte`
      : 'limit maxElements';
  const tooLarge = (what: string) =>
    new PayloadTooLarge(
      `${owner}: the Parquet file declares ${what}, over the limit of ${maxValues} values (${why})`,
    );
  const rows = Number(metadata.num_rows);
  if (rows * leafColumns > maxValues) throw tooLarge(`${rows} rows × ${leafColumns} columns`);
  let values = 0;
  let bytes = 0;
  const maxBytes = maxValues * BYTES_PER_VALUE;
  for (const group of metadata.row_groups) {
    if (Number(group.num_rows) * leafColumns > maxValues) {
      throw tooLarge(`a row group of ${group.num_rows} rows × ${leafColumns} columns`);
    }
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (!meta) continue; // hyparquet refuses it
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const end = Math.min(start + Number(meta.total_compressed_size), file.byteLength);
      for (const page of pageHeaders(file, start, end)) {
        values += page.values;
        bytes += page.uncompressedSize;
        if (values > maxValues) throw tooLarge(`pages of more than ${values} values in all`);
        if (bytes > maxBytes) {
          throw new PayloadTooLarge(
            `${owner}: the Parquet file's pages decompress to more than ${bytes} bytes, over the limit of ${maxBytes}`,
          );
        }
      }
    }
  }
}

interface PageDeclaration {
  values: number;
  uncompressedSize: number;
}

/** Page headers of one column chunk, from its first byte to its end (the range hyparquet reads). */
function* pageHeaders(file: ArrayBuffer, start: number, end: number): Generator<PageDeclaration> {
  if (!(start >= 0 && start <= end)) throw new BadInput('Parquet column chunk offsets are out of range');
  const reader = new CompactReader(new Uint8Array(file, start, end - start));
  while (reader.at < reader.bytes.length - 1) {
    const header = reader.struct(0);
    const compressed = numberField(header, 3);
    const uncompressed = numberField(header, 2);
    // The value count of whichever page header is present: data (5), dictionary (7) or data v2 (8).
    const sub = [5, 7, 8].map((id) => header.get(id)).find((v) => v instanceof Map) as
      | Map<number, unknown>
      | undefined;
    const values = sub ? numberField(sub, 1) : 0;
    if (compressed < 0 || uncompressed < 0 || values < 0)
      throw new BadInput('Parquet page header is invalid');
    yield { values, uncompressedSize: uncompressed };
    reader.at += compressed;
  }
}

function numberField(struct: Map<number, unknown>, id: number): number {
  const value = struct.get(id);
  return typeof value === 'number' ? value : 0;
}

/** Struct nesting a page header may have (statistics are two levels down); deeper is not a page header. */
const MAX_STRUCT_DEPTH = 8;

/**
 * Just enough of the Thrift compact protocol to read a struct's integer and struct fields; every other
 * field is skipped by its wire type. Truncated or malformed bytes → BadInput.
 */
class CompactReader {
  at = 0;
  constructor(readonly bytes: Uint8Array) {}

  struct(depth: number): Map<number, unknown> {
    if (depth > MAX_STRUCT_DEPTH) throw malformed();
    const fields = new Map<number, unknown>();
    let id = 0;
    for (;;) {
      const head = this.byte();
      if (head === 0) return fields;
      const delta = head >> 4;
      id = delta === 0 ? zigzag(this.varint()) : id + delta;
      fields.set(id, this.value(head & 0x0f, depth));
    }
  }

  private value(type: number, depth: number): unknown {
    switch (type) {
      case 1:
      case 2:
        return type === 1;
      case 3:
        return this.byte();
      case 4:
      case 5:
      case 6:
        return zigzag(this.varint());
      case 7:
        return this.skip(8);
      case 8:
        return this.skip(this.varint());
      case 9:
      case 10: {
        const head = this.byte();
        const size = head >> 4 === 15 ? this.varint() : head >> 4;
        const element = head & 0x0f;
        for (let i = 0; i < size; i++) {
          if (element === 1 || element === 2) this.byte();
          else this.value(element, depth + 1);
        }
        return undefined;
      }
      case 11: {
        const size = this.varint();
        if (size === 0) return undefined;
        const kinds = this.byte();
        for (let i = 0; i < size; i++) {
          this.value(kinds >> 4, depth + 1);
          this.value(kinds & 0x0f, depth + 1);
        }
        return undefined;
      }
      case 12:
        return this.struct(depth + 1);
      default:
        throw malformed();
    }
  }

  private byte(): number {
    if (this.at >= this.bytes.length) throw malformed();
    return this.bytes[this.at++]!;
  }

  private skip(n: number): undefined {
    if (n < 0 || this.at + n > this.bytes.length) throw malformed();
    this.at += n;
    return undefined;
  }

  /** An unsigned varint of up to 64 bits, as a Number (exact to 2^53, which every size here is under). */
  private varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw malformed();
  }
}

function zigzag(n: number): number {
  return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
}

function malformed(): BadInput {
  return new BadInput('Parquet page header is malformed or truncated');
}
