/**
 * The protobuf wire format, as much as the KV Connect messages need: varints (as bigint, so
 * that 64-bit and negative values survive), length-delimited fields, and packed repeated
 * varints. Unknown fields are skipped, as protobuf readers must.
 */

/** Wire types. */
export const VARINT = 0;
export const FIXED64 = 1;
export const LEN = 2;
export const FIXED32 = 5;

/** A protobuf message body that could not be read. */
export class ProtobufError extends Error {}

/** One field read from a message: its number, wire type and raw value. */
export interface Field {
  no: number;
  type: number;
  /** The varint, for a VARINT field. */
  int: bigint;
  /** The bytes, for a LEN field. */
  bytes: Uint8Array;
}

/** Every field of a message body in order (a repeated field appears once per element). */
export function readFields(buf: Uint8Array): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= buf.length) throw new ProtobufError("truncated varint");
      const b = buf[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, v);
    }
    throw new ProtobufError("varint longer than 10 bytes");
  };
  const skip = (n: number) => {
    if (pos + n > buf.length) throw new ProtobufError("truncated field");
    pos += n;
  };
  while (pos < buf.length) {
    const tag = varint();
    const no = Number(tag >> 3n);
    const type = Number(tag & 7n);
    if (no === 0) throw new ProtobufError("field number 0");
    const field: Field = { no, type, int: 0n, bytes: new Uint8Array() };
    if (type === VARINT) field.int = varint();
    else if (type === LEN) {
      const len = Number(varint());
      const start = pos;
      skip(len);
      field.bytes = buf.subarray(start, pos);
    } else if (type === FIXED64) skip(8);
    else if (type === FIXED32) skip(4);
    else throw new ProtobufError(`unsupported wire type ${type}`);
    fields.push(field);
  }
  return fields;
}

/** A varint field's value as a signed 64-bit number (int64/int32 fields). */
export function asInt(f: Field): number {
  return Number(BigInt.asIntN(64, f.int));
}

/** The varints of a repeated scalar field, packed (LEN) or not (VARINT). */
export function packedInts(f: Field): bigint[] {
  if (f.type === VARINT) return [f.int];
  const out: bigint[] = [];
  let pos = 0;
  while (pos < f.bytes.length) {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= f.bytes.length) throw new ProtobufError("truncated packed varint");
      const b = f.bytes[pos++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (b < 0x80) break;
    }
    out.push(BigInt.asUintN(64, v));
  }
  return out;
}

/** Writes a message body field by field; fields with a default value may be left out. */
export class Writer {
  #chunks: number[] = [];

  #varint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.#chunks.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.#chunks.push(Number(x));
  }

  #tag(no: number, type: number): void {
    this.#varint(BigInt((no << 3) | type));
  }

  /** A varint field (int32, int64, uint32, enum); zero is left out. */
  int(no: number, v: number | bigint): this {
    if (v === 0 || v === 0n) return this;
    this.#tag(no, VARINT);
    this.#varint(BigInt(v));
    return this;
  }

  /** A bool field; false is left out. */
  bool(no: number, v: boolean): this {
    return v ? this.int(no, 1) : this;
  }

  /** A bytes field, written even when empty (for elements of repeated fields). */
  bytes(no: number, v: Uint8Array): this {
    this.#tag(no, LEN);
    this.#varint(BigInt(v.length));
    for (const b of v) this.#chunks.push(b);
    return this;
  }

  /** A nested message field. */
  message(no: number, w: Writer): this {
    return this.bytes(no, w.finish());
  }

  /** A packed repeated varint field; nothing when empty. */
  packed(no: number, vs: readonly number[]): this {
    if (vs.length === 0) return this;
    const inner = new Writer();
    for (const v of vs) inner.#varint(BigInt(v));
    return this.bytes(no, inner.finish());
  }

  /** The encoded body. */
  finish(): Uint8Array<ArrayBuffer> {
    return Uint8Array.from(this.#chunks);
  }
}
