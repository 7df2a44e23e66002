/**
 * The protobuf wire format subset the ONNX writer needs (varint, 64-bit varint, fixed32,
 * length-delimited), written directly: only encoding, only the field kinds ONNX models use.
 */

/** A message under construction: fields are appended in call order. */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private scratch: number[] = [];
  private length = 0;

  private flushScratch(): void {
    if (this.scratch.length === 0) return;
    this.chunks.push(Uint8Array.from(this.scratch));
    this.length += this.scratch.length;
    this.scratch = [];
  }

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    if (v < 0x80n) {
      this.scratch.push(Number(v));
      return;
    }
    while (v >= 0x80n) {
      this.scratch.push(Number((v & 0x7fn) | 0x80n));
      v >>= 7n;
    }
    this.scratch.push(Number(v));
  }

  private tag(field: number, wireType: 0 | 2 | 5): void {
    this.varint(field * 8 + wireType);
  }

  /** int32/int64/enum/bool field (negative values as 10-byte two's complement, as protobuf does). */
  int(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.scratch.push(...b);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, 2);
    this.varint(value.length);
    this.flushScratch();
    this.chunks.push(value);
    this.length += value.length;
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, value: ProtoWriter): this {
    return this.bytes(field, value.finish());
  }

  /** Packed repeated int64 (ONNX `dims`, `ints`). */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.varint(v);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    this.flushScratch();
    if (this.chunks.length === 1) return this.chunks[0];
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}
