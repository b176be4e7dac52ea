/**
 * The store behind the KV Connect test server: raw keys and encoded values over a local
 * `Deno.Kv` (a file or ":memory:"). Each raw key is the one-part key `[Uint8Array]`, whose
 * encoding keeps the byte order of raw keys, so a raw range is a range of the local store.
 * A V8 value is kept as its bytes (a `Uint8Array`, stored byte for byte), an LE64 value as a
 * `Deno.KvU64` (so sum, min and max are the local store's own), a bytes value as `{ bytes }`.
 * Versionstamps are the local store's. Reads and writes take turns through one queue, so the
 * ranges of one snapshot read see one state, and a write's failed checks are reported as
 * they were when it failed; the local store's own checks still decide every write.
 */
import {
  type AtomicWrite,
  type KvEntry,
  type KvValue,
  M_DELETE,
  M_MAX,
  M_MIN,
  M_SET,
  M_SUM,
  type ReadRange,
  VE_BYTES,
  VE_LE64,
  VE_V8,
} from "./datapath.ts";

/** The request could not be served as asked: answered 400 with this message. */
export class BadRequest extends Error {}

/** The protocol's limits (denoland/denokv proto/limits.rs). */
export const LIMITS = {
  writeKeyBytes: 2048,
  readKeyBytes: 2049,
  valueBytes: 65536,
  readRanges: 10,
  readEntries: 1000,
  checks: 10,
  mutations: 1000,
  totalMutationBytes: 819200,
};

/** What the local store holds for one raw value. */
type Stored = Uint8Array | Deno.KvU64 | { bytes: Uint8Array };

function toStored(v: KvValue): Stored {
  if (v.encoding === VE_V8) return v.data;
  // A copy: `data` is a view into the whole request body, which the local store would
  // serialise with the object (every such value as large as the request).
  if (v.encoding === VE_BYTES) return { bytes: v.data.slice() };
  if (v.encoding === VE_LE64) return new Deno.KvU64(le64(v.data));
  throw new BadRequest(`unknown value encoding ${v.encoding}`);
}

function fromStored(s: unknown): KvValue {
  if (s instanceof Uint8Array) return { data: s, encoding: VE_V8 };
  if (s instanceof Deno.KvU64) {
    const data = new Uint8Array(8);
    new DataView(data.buffer).setBigUint64(0, s.value, true);
    return { data, encoding: VE_LE64 };
  }
  return { data: (s as { bytes: Uint8Array }).bytes, encoding: VE_BYTES };
}

function le64(data: Uint8Array): bigint {
  if (data.length !== 8) throw new BadRequest("an LE64 value must be 8 bytes");
  return new DataView(data.buffer, data.byteOffset, 8).getBigUint64(0, true);
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));

/** -1, 0 or 1 as `a` sorts before, with or after `b`, byte by byte. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Raw keys and values over a local `Deno.Kv` (see above). */
export class RawStore {
  #kv: Deno.Kv;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Runs `fn` after every read and write queued before it. */
  #inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Reads every range from one state of the store. */
  snapshotRead(ranges: ReadRange[]): Promise<KvEntry[][]> {
    if (ranges.length > LIMITS.readRanges) throw new BadRequest("too many read ranges");
    let total = 0;
    for (const r of ranges) {
      if (r.limit <= 0) throw new BadRequest("invalid read range limit");
      if (r.start.length > LIMITS.readKeyBytes || r.end.length > LIMITS.readKeyBytes) {
        throw new BadRequest("key too long");
      }
      total += r.limit;
    }
    if (total > LIMITS.readEntries) throw new BadRequest("read range too large");
    return this.#inTurn(() => Promise.all(ranges.map((r) => this.#readRange(r))));
  }

  async #readRange(r: ReadRange): Promise<KvEntry[]> {
    if (compareBytes(r.start, r.end) >= 0) return [];
    const out: KvEntry[] = [];
    const iter = this.#kv.list<unknown>(
      { start: [r.start], end: [r.end] },
      { limit: r.limit, reverse: r.reverse, batchSize: Math.min(r.limit, 500) },
    );
    for await (const e of iter) {
      out.push({
        key: e.key[0] as Uint8Array,
        ...fromStored(e.value),
        versionstamp: unhex(e.versionstamp),
      });
    }
    return out;
  }

  /**
   * Applies `write` if its checks hold: the new versionstamp, or the indexes of the checks
   * that failed.
   */
  atomicWrite(
    write: AtomicWrite,
  ): Promise<{ ok: true; versionstamp: Uint8Array } | { ok: false; failedChecks: number[] }> {
    const op = this.#build(write);
    return this.#inTurn(async () => {
      let res: Deno.KvCommitResult | Deno.KvCommitError;
      try {
        res = await op.commit();
      } catch (e) {
        // A sum, min or max on a value that is no KvU64, and the like.
        throw new BadRequest(e instanceof Error ? e.message : String(e));
      }
      if (res.ok) return { ok: true, versionstamp: unhex(res.versionstamp) };
      const now = await this.#kv.getMany(write.checks.map((c) => [c.key]));
      const failedChecks = write.checks.flatMap((c, i) =>
        (now[i].versionstamp ?? "") === hex(c.versionstamp) ? [] : [i]
      );
      return { ok: false, failedChecks };
    });
  }

  /** The local atomic operation for `write`, its limits checked. */
  #build(write: AtomicWrite): Deno.AtomicOperation {
    if (write.enqueues > 0) throw new BadRequest("enqueue is not supported by this server");
    if (write.checks.length > LIMITS.checks) throw new BadRequest("too many checks");
    if (write.mutations.length > LIMITS.mutations) throw new BadRequest("too many mutations");
    const op = this.#kv.atomic();
    let total = 0;
    for (const c of write.checks) {
      if (c.key.length > LIMITS.readKeyBytes) throw new BadRequest("key too long");
      if (c.versionstamp.length !== 0 && c.versionstamp.length !== 10) {
        throw new BadRequest("invalid versionstamp");
      }
      total += c.key.length;
      op.check({ key: [c.key], versionstamp: c.versionstamp.length ? hex(c.versionstamp) : null });
    }
    for (const m of write.mutations) {
      if (m.key.length > LIMITS.writeKeyBytes) throw new BadRequest("key too long");
      const size = m.value?.data.length ?? 0;
      if (size > LIMITS.valueBytes) throw new BadRequest("value too long");
      total += m.key.length + size;
      const key = [m.key];
      if (m.type === M_DELETE) {
        op.delete(key);
        continue;
      }
      if (!m.value) throw new BadRequest("invalid mutation kind");
      if (m.type === M_SET) {
        const expireIn = m.expireAtMs > 0 ? Math.max(1, m.expireAtMs - Date.now()) : undefined;
        op.set(key, toStored(m.value), expireIn === undefined ? undefined : { expireIn });
      } else if (m.type === M_SUM || m.type === M_MIN || m.type === M_MAX) {
        if (m.value.encoding !== VE_LE64 || m.sumBounds) {
          throw new BadRequest("only KvU64 sum, min and max are supported by this server");
        }
        const n = le64(m.value.data);
        if (m.type === M_SUM) op.sum(key, n);
        else if (m.type === M_MIN) op.min(key, n);
        else op.max(key, n);
      } else {
        throw new BadRequest(`mutation type ${m.type} is not supported by this server`);
      }
    }
    if (total > LIMITS.totalMutationBytes) throw new BadRequest("atomic write too large");
    return op;
  }
}
