/**
 * The KV Connect data path messages (denoland/denokv proto/schema/datapath.proto) this test
 * server reads and writes: SnapshotRead and AtomicWrite in, their outputs back.
 */
import { asInt, type Field, LEN, ProtobufError, readFields, VARINT, Writer } from "./protobuf.ts";

/** ValueEncoding. */
export const VE_V8 = 1;
export const VE_LE64 = 2;
export const VE_BYTES = 3;

/** MutationType. */
export const M_SET = 1;
export const M_DELETE = 2;
export const M_SUM = 3;
export const M_MAX = 4;
export const M_MIN = 5;
export const M_SET_SUFFIX_VERSIONSTAMPED_KEY = 9;

/** SnapshotReadStatus.SR_SUCCESS. */
export const SR_SUCCESS = 1;

/** AtomicWriteStatus. */
export const AW_SUCCESS = 1;
export const AW_CHECK_FAILURE = 2;

export interface ReadRange {
  start: Uint8Array;
  end: Uint8Array;
  limit: number;
  reverse: boolean;
}

export interface KvValue {
  data: Uint8Array;
  encoding: number;
}

export interface KvEntry extends KvValue {
  key: Uint8Array;
  /** 10 bytes. */
  versionstamp: Uint8Array;
}

export interface Check {
  key: Uint8Array;
  /** 10 bytes, or empty for "the key does not exist". */
  versionstamp: Uint8Array;
}

export interface Mutation {
  key: Uint8Array;
  value: KvValue | null;
  type: number;
  /** Milliseconds since the epoch; 0 for none. */
  expireAtMs: number;
  /** Set when the sum carries V8 bounds (a sum of numbers, not of KvU64). */
  sumBounds: boolean;
}

export interface AtomicWrite {
  checks: Check[];
  mutations: Mutation[];
  enqueues: number;
}

/** Reads the fields of a message expected as `type` at field `f`. */
function expect(f: Field, type: number): Field {
  if (f.type !== type) throw new ProtobufError(`field ${f.no}: wire type ${f.type}`);
  return f;
}

/** Decodes a `SnapshotRead` request body. */
export function decodeSnapshotRead(body: Uint8Array): ReadRange[] {
  const ranges: ReadRange[] = [];
  for (const f of readFields(body)) {
    if (f.no !== 1) continue;
    const r: ReadRange = {
      start: new Uint8Array(),
      end: new Uint8Array(),
      limit: 0,
      reverse: false,
    };
    for (const g of readFields(expect(f, LEN).bytes)) {
      if (g.no === 1) r.start = expect(g, LEN).bytes;
      else if (g.no === 2) r.end = expect(g, LEN).bytes;
      else if (g.no === 3) r.limit = asInt(expect(g, VARINT));
      else if (g.no === 4) r.reverse = expect(g, VARINT).int !== 0n;
    }
    ranges.push(r);
  }
  return ranges;
}

function decodeValue(body: Uint8Array): KvValue {
  const v: KvValue = { data: new Uint8Array(), encoding: 0 };
  for (const f of readFields(body)) {
    if (f.no === 1) v.data = expect(f, LEN).bytes;
    else if (f.no === 2) v.encoding = asInt(expect(f, VARINT));
  }
  return v;
}

/** Decodes an `AtomicWrite` request body. */
export function decodeAtomicWrite(body: Uint8Array): AtomicWrite {
  const out: AtomicWrite = { checks: [], mutations: [], enqueues: 0 };
  for (const f of readFields(body)) {
    if (f.no === 1) {
      const c: Check = { key: new Uint8Array(), versionstamp: new Uint8Array() };
      for (const g of readFields(expect(f, LEN).bytes)) {
        if (g.no === 1) c.key = expect(g, LEN).bytes;
        else if (g.no === 2) c.versionstamp = expect(g, LEN).bytes;
      }
      out.checks.push(c);
    } else if (f.no === 2) {
      const m: Mutation = {
        key: new Uint8Array(),
        value: null,
        type: 0,
        expireAtMs: 0,
        sumBounds: false,
      };
      for (const g of readFields(expect(f, LEN).bytes)) {
        if (g.no === 1) m.key = expect(g, LEN).bytes;
        else if (g.no === 2) m.value = decodeValue(expect(g, LEN).bytes);
        else if (g.no === 3) m.type = asInt(expect(g, VARINT));
        else if (g.no === 4) m.expireAtMs = asInt(expect(g, VARINT));
        else if (g.no === 5 || g.no === 6) m.sumBounds ||= expect(g, LEN).bytes.length > 0;
        else if (g.no === 7) m.sumBounds ||= expect(g, VARINT).int !== 0n;
      }
      out.mutations.push(m);
    } else if (f.no === 3) out.enqueues++;
  }
  return out;
}

/** Encodes a `SnapshotReadOutput`: every range read, strongly consistent, SR_SUCCESS. */
export function encodeSnapshotReadOutput(ranges: KvEntry[][]): Uint8Array<ArrayBuffer> {
  const w = new Writer();
  for (const entries of ranges) {
    const r = new Writer();
    for (const e of entries) {
      r.message(
        1,
        new Writer().bytes(1, e.key).bytes(2, e.data).int(3, e.encoding).bytes(4, e.versionstamp),
      );
    }
    w.message(1, r);
  }
  return w.bool(4, true).int(8, SR_SUCCESS).finish();
}

/** Encodes an `AtomicWriteOutput`. */
export function encodeAtomicWriteOutput(
  out: { ok: true; versionstamp: Uint8Array } | { ok: false; failedChecks: number[] },
): Uint8Array<ArrayBuffer> {
  if (out.ok) return new Writer().int(1, AW_SUCCESS).bytes(2, out.versionstamp).finish();
  return new Writer().int(1, AW_CHECK_FAILURE).packed(4, out.failedChecks).finish();
}
