/**
 * What one operation costs in Deno KV as Deno Deploy bills it (docs/benchmarks.md, "Cost
 * per operation"): a KV handle that meters every read and every committed mutation.
 *
 * - read units: 4 KiB each, rounded up per key read (`get`, each key of `getMany`) and per
 *   `list` call over the entries it returned; a read of a missing key is one unit;
 * - write units: 1 KiB each, rounded up per mutation over key and value bytes (a delete or
 *   a `sum` is one unit); atomic checks are not counted;
 * - entries written: mutations of committed atomics (and plain `set`/`delete`); of them,
 *   `versionWrites` are writes of the read caches' version key (a blind write, kv/keys.ts);
 * - bytes stored: the change in logical size (key bytes plus serialised value bytes) of the
 *   keys the commits touched, read before and after each commit outside the meter.
 *
 * Values are sized as KV stores them: V8 serialisation, raw bytes for `Uint8Array`, 8 bytes
 * for `KvU64`. Keys are sized in KV's tuple encoding.
 */
import { serialize } from "node:v8";
import { READ_VERSION_KEY } from "../../kv/keys.ts";

const sameKey = (a: Deno.KvKey, b: Deno.KvKey) =>
  a.length === b.length && a.every((part, i) => part === b[i]);

export interface Cost {
  /** KV calls: get, getMany, list, commit (and plain set/delete). */
  calls: number;
  readUnits: number;
  /** Entries returned by reads (missing keys of get/getMany included). */
  entriesRead: number;
  entriesWritten: number;
  /** Of `entriesWritten`, the writes of the read caches' version key. */
  versionWrites: number;
  writeUnits: number;
  /** Key and value bytes of the mutations written. */
  bytesWritten: number;
  /** Change of the stored logical size. */
  bytesStored: number;
}

const encoder = new TextEncoder();

/** Bytes of a key in KV's tuple encoding. */
export function keyBytes(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) {
    if (typeof part === "string") {
      const b = encoder.encode(part);
      n += 2 + b.length + b.filter((x) => x === 0).length;
    } else if (typeof part === "number") n += 9;
    else if (typeof part === "bigint") n += 2 + Math.ceil(part.toString(16).length / 2);
    else if (typeof part === "boolean") n += 1;
    else if (part instanceof Uint8Array) n += 2 + part.length + part.filter((x) => x === 0).length;
  }
  return n;
}

/** Bytes of a value as KV stores it. */
export function valueBytes(value: unknown): number {
  if (value instanceof Deno.KvU64) return 8;
  if (value instanceof Uint8Array) return value.length;
  return serialize(value).length;
}

function entryBytes(e: Deno.KvEntryMaybe<unknown>): number {
  return e.versionstamp === null ? 0 : keyBytes(e.key) + valueBytes(e.value);
}

const zero = (): Cost => ({
  calls: 0,
  readUnits: 0,
  entriesRead: 0,
  entriesWritten: 0,
  versionWrites: 0,
  writeUnits: 0,
  bytesWritten: 0,
  bytesStored: 0,
});

type Mutation = { key: Deno.KvKey; bytes: number };

/** A metering KV handle over `raw`; `take()` returns what was spent since the last take. */
export function meteredKv(raw: Deno.Kv): { kv: Deno.Kv; take(): Cost } {
  let cost = zero();
  const readUnitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));
  const commitMutations = async (mutations: Mutation[], commit: () => Promise<unknown>) => {
    const keysTouched = mutations.map((m) => m.key);
    const before = await readAll(raw, keysTouched);
    const res = await commit() as { ok: boolean };
    cost.calls++;
    if (!res.ok) return res;
    const after = await readAll(raw, keysTouched);
    cost.entriesWritten += mutations.length;
    cost.versionWrites += mutations.filter((m) => sameKey(m.key, READ_VERSION_KEY)).length;
    for (const m of mutations) {
      cost.writeUnits += Math.max(1, Math.ceil(m.bytes / 1024));
      cost.bytesWritten += m.bytes;
    }
    const seen = new Set<string>();
    after.forEach((e, i) => {
      const id = JSON.stringify(keysTouched[i], (_, v) => typeof v === "bigint" ? `${v}n` : v);
      if (seen.has(id)) return;
      seen.add(id);
      cost.bytesStored += entryBytes(e) - entryBytes(before[i]);
    });
    return res;
  };
  const meterAtomic = (op: Deno.AtomicOperation): Deno.AtomicOperation => {
    const mutations: Mutation[] = [];
    const record = (key: Deno.KvKey, value?: unknown) =>
      mutations.push({ key, bytes: keyBytes(key) + (value === undefined ? 0 : valueBytes(value)) });
    const proxy: Deno.AtomicOperation = new Proxy(op, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          if (prop === "commit") return commitMutations(mutations, () => v.apply(target, args));
          if (prop === "set") record(args[0] as Deno.KvKey, args[1]);
          else if (prop === "delete") record(args[0] as Deno.KvKey);
          else if (prop === "sum" || prop === "min" || prop === "max") {
            record(args[0] as Deno.KvKey, args[1]);
          } else if (prop === "mutate") {
            for (const m of args as Deno.KvMutation[]) {
              record(m.key, "value" in m ? m.value : undefined);
            }
          }
          const out = v.apply(target, args);
          return out === target ? proxy : out;
        };
      },
    });
    return proxy;
  };
  const kv = new Proxy(raw, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      if (prop === "atomic") return () => meterAtomic(target.atomic());
      if (prop === "get") {
        return async (...args: unknown[]) => {
          const e = await v.apply(target, args) as Deno.KvEntryMaybe<unknown>;
          cost.calls++;
          cost.entriesRead++;
          cost.readUnits += readUnitsOf(entryBytes(e));
          return e;
        };
      }
      if (prop === "getMany") {
        return async (...args: unknown[]) => {
          const es = await v.apply(target, args) as Deno.KvEntryMaybe<unknown>[];
          cost.calls++;
          for (const e of es) {
            cost.entriesRead++;
            cost.readUnits += readUnitsOf(entryBytes(e));
          }
          return es;
        };
      }
      if (prop === "list") {
        return (...args: unknown[]) => {
          const iter = v.apply(target, args) as Deno.KvListIterator<unknown>;
          cost.calls++;
          let bytes = 0;
          let charged = 0;
          const charge = () => {
            const units = readUnitsOf(bytes);
            cost.readUnits += units - charged;
            charged = units;
          };
          charge();
          return (async function* () {
            for await (const e of iter) {
              cost.entriesRead++;
              bytes += entryBytes(e);
              charge();
              yield e;
            }
          })();
        };
      }
      if (prop === "set" || prop === "delete") {
        return (...args: unknown[]) => {
          const key = args[0] as Deno.KvKey;
          const bytes = keyBytes(key) + (prop === "set" ? valueBytes(args[1]) : 0);
          return commitMutations([{ key, bytes }], () => v.apply(target, args));
        };
      }
      return v.bind(target);
    },
  }) as Deno.Kv;
  return {
    kv,
    take() {
      const out = cost;
      cost = zero();
      return out;
    },
  };
}

async function readAll(kv: Deno.Kv, keys: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const out: Deno.KvEntryMaybe<unknown>[] = [];
  for (let i = 0; i < keys.length; i += 10) out.push(...await kv.getMany(keys.slice(i, i + 10)));
  return out;
}
