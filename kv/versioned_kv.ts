/**
 * The KV handle the service uses: `Deno.Kv` unchanged, except that every write — `set`,
 * `delete`, and every atomic commit, whoever makes it — also blind-writes the read-cache
 * version key (kv/read_versions.ts) of what it changes, in the same atomic.
 * Read caches are enabled only on handles made here (`isVersioned`), so no write path can
 * change cached data without the caches noticing.
 */
import { markAgentWrites, readVersionBumps } from "./read_versions.ts";

const versioned = new WeakSet<Deno.Kv>();

/** True for a handle whose every write bumps the read-cache versions. */
export function isVersioned(kv: Deno.Kv): boolean {
  return versioned.has(kv);
}

/**
 * The keys a commit mutating `mutated` must also blind-write: the read-cache version
 * (kv/read_versions.ts) of what it changes, each once and never one the commit already
 * writes itself.
 */
function commitBumps(mutated: Deno.KvKey[]): Deno.KvKey[] {
  const out: Deno.KvKey[] = [];
  for (const k of readVersionBumps(mutated)) {
    if (!mutated.some((m) => sameKey(m, k))) out.push(k);
  }
  return out;
}

function sameKey(a: Deno.KvKey, b: Deno.KvKey): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

/** Wraps an atomic operation so that its commit also bumps the versions of what it mutates. */
function versionedAtomic(op: Deno.AtomicOperation): Deno.AtomicOperation {
  const mutated: Deno.KvKey[] = [];
  const wrapper: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      switch (prop) {
        case "set":
        case "delete":
        case "sum":
        case "min":
        case "max":
          return (key: Deno.KvKey, ...rest: unknown[]) => {
            mutated.push(key);
            (target[prop] as (...a: unknown[]) => unknown).call(target, key, ...rest);
            return wrapper;
          };
        case "mutate":
          return (...ms: Deno.KvMutation[]) => {
            for (const m of ms) mutated.push(m.key);
            target.mutate(...ms);
            return wrapper;
          };
        case "check":
          return (...checks: Deno.AtomicCheck[]) => {
            target.check(...checks);
            return wrapper;
          };
        case "commit":
          return async () => {
            for (const k of commitBumps(mutated)) target.set(k, 1);
            const res = await target.commit();
            if (res.ok) markAgentWrites(mutated);
            return res;
          };
        default: {
          const v = Reflect.get(target, prop, target);
          return typeof v === "function" ? v.bind(target) : v;
        }
      }
    },
  });
  return wrapper;
}

/** The reads a second handle on the same file can serve (kv/open.ts). */
const READS = new Set<PropertyKey>(["get", "getMany", "list"]);

/**
 * Wraps a KV handle so that every write bumps the read-cache versions (see above). With
 * `reader`, a second handle on the same SQLite file, `get`, `getMany` and `list` go to it:
 * the embedded store serves each handle on its own thread, so reads do not queue behind a
 * commit in flight (SQLite's WAL lets them run while it is in flight, and a read started after a commit
 * returned sees it). `close` (and disposal) closes both.
 */
export function versionedKv(kv: Deno.Kv, reader?: Deno.Kv): Deno.Kv {
  if (versioned.has(kv)) return kv;
  const bound = new Map<PropertyKey, unknown>();
  const wrapped: Deno.Kv = new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") return () => versionedAtomic(target.atomic());
      if (prop === "set") {
        return async (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) => {
          const res = await versionedAtomic(target.atomic()).set(key, value, options).commit();
          if (!res.ok) throw new TypeError("kv.set failed");
          return res;
        };
      }
      if (prop === "delete") {
        return async (key: Deno.KvKey) => {
          await versionedAtomic(target.atomic()).delete(key).commit();
        };
      }
      let fn = bound.get(prop);
      if (fn === undefined) {
        const from = reader && READS.has(prop) ? reader : target;
        const v = Reflect.get(from, prop, from);
        if (typeof v !== "function") return v;
        fn = (prop === "close" || prop === Symbol.dispose) && reader
          ? () => {
            reader.close();
            target.close();
          }
          : v.bind(from);
        bound.set(prop, fn);
      }
      return fn;
    },
  });
  versioned.add(wrapped);
  return wrapped;
}
