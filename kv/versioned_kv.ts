/**
 * The KV handle the service uses: `Deno.Kv` unchanged, except that every write — `set`,
 * `delete`, and every atomic commit, whoever makes it — also blind-writes the read-version
 * key (kv/keys.ts `READ_VERSION_KEY`) when it changes what a cached read can show, in the
 * same atomic. Read caches are enabled only on handles made here (`isVersioned`), so no
 * write path can change cached data without the caches noticing. Every read and commit is
 * also reported to the current KV meter (kv/meter.ts), when one is installed, and given up
 * when the store does not answer it in time (kv/store_deadline.ts).
 */
import { bumpsReadVersion } from "./invalidation.ts";
import { READ_VERSION_KEY } from "./keys.ts";
import { metered, onListPages } from "./meter.ts";
import { STORE_DEADLINE_MS, withinDeadline } from "./store_deadline.ts";

const versioned = new WeakSet<Deno.Kv>();

/** True for a handle whose every write bumps the read-cache versions. */
export function isVersioned(kv: Deno.Kv): boolean {
  return versioned.has(kv);
}

/** A successful commit through a versioned handle, as its listeners are told. */
interface CommitInfo {
  /** The versioned handle it went through. */
  kv: Deno.Kv;
  versionstamp: string;
  /** Whether it bumped the read-version key (then stamped with `versionstamp`). */
  bumped: boolean;
}

type CommitListener = (mutated: Deno.KvKey[], commit: CommitInfo) => void;
const listeners: CommitListener[] = [];

/** Calls `listener` with the keys every successful commit through a versioned handle wrote. */
export function onCommit(listener: CommitListener): void {
  listeners.push(listener);
}

/** The methods of an atomic operation that write the key they are given first. */
const WRITES = new Set<PropertyKey>(["set", "delete", "sum", "min", "max"]);

/** Wraps an atomic operation so that its commit also bumps the version of what it mutates. */
function versionedAtomic(
  op: Deno.AtomicOperation,
  kv: Deno.Kv,
  deadlineMs: number,
): Deno.AtomicOperation {
  const mutated: Deno.KvKey[] = [];
  const wrapper: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      if (prop === "commit") {
        return async () => {
          const bumped = mutated.some(bumpsReadVersion);
          if (bumped) target.set(READ_VERSION_KEY, 1);
          const res = await metered(
            () => withinDeadline(target.commit(), deadlineMs, "commit"),
            () => `commit ${mutated.map((k) => String(k[0])).join(",")}`,
          );
          if (res.ok) {
            const info = { kv, versionstamp: res.versionstamp, bumped };
            for (const listener of listeners) listener(mutated, info);
          }
          return res;
        };
      }
      const method = Reflect.get(target, prop, target);
      if (typeof method !== "function") return method;
      return (...args: unknown[]) => {
        if (WRITES.has(prop)) mutated.push(args[0] as Deno.KvKey);
        if (prop === "mutate") { for (const m of args as Deno.KvMutation[]) mutated.push(m.key); }
        method.apply(target, args);
        return wrapper; // every method but commit returns the operation, for chaining
      };
    },
  });
  return wrapper;
}

/** A short description of a call's keys or selector, for a meter's trace. */
function describe(arg: unknown): string {
  const short = (key: unknown) => Array.isArray(key) ? String(key[0]) : "?";
  if (Array.isArray(arg) && Array.isArray(arg[0])) return arg.map(short).join(",");
  if (Array.isArray(arg)) return short(arg);
  const sel = arg as { prefix?: unknown; start?: unknown } | undefined;
  return short(sel?.prefix ?? sel?.start);
}

/** The reads a second handle on the same file can serve (kv/open.ts). */
const READS = new Set<PropertyKey>(["get", "getMany", "list"]);

/**
 * Wraps a KV handle so that every write bumps the read-cache versions (see above). With
 * `reader`, a second handle on the same SQLite file, `get`, `getMany` and `list` go to it:
 * the embedded store serves each handle on its own thread, so reads do not queue behind a
 * commit in flight (SQLite's WAL lets them run while it is in flight, and a read started
 * after a commit returned sees it). `close` (and disposal) closes both. A call the store has
 * not answered within `deadlineMs` is given up (kv/store_deadline.ts).
 */
export function versionedKv(
  kv: Deno.Kv,
  reader?: Deno.Kv,
  { deadlineMs = STORE_DEADLINE_MS }: { deadlineMs?: number } = {},
): Deno.Kv {
  if (versioned.has(kv)) return kv;
  const bound = new Map<PropertyKey, unknown>();
  const wrapped: Deno.Kv = new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") return () => versionedAtomic(target.atomic(), wrapped, deadlineMs);
      if (prop === "set") {
        return async (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) => {
          const op = versionedAtomic(target.atomic(), wrapped, deadlineMs);
          const res = await op.set(key, value, options).commit();
          if (!res.ok) throw new TypeError("kv.set failed");
          return res;
        };
      }
      if (prop === "delete") {
        return async (key: Deno.KvKey) => {
          await versionedAtomic(target.atomic(), wrapped, deadlineMs).delete(key).commit();
        };
      }
      let fn = bound.get(prop);
      if (fn === undefined) {
        const from = reader && READS.has(prop) ? reader : target;
        const v = Reflect.get(from, prop, from);
        if (typeof v !== "function") return v;
        const call = v.bind(from);
        fn = (prop === "close" || prop === Symbol.dispose) && reader
          ? () => {
            reader.close();
            target.close();
          }
          : prop === "list"
          ? (...args: unknown[]) =>
            onListPages(
              call(...args),
              args[1] as Deno.KvListOptions | undefined,
              (read) =>
                metered(
                  () => withinDeadline(read(), deadlineMs, "list"),
                  () => `list ${describe(args[0])}`,
                ),
            )
          : prop === "get" || prop === "getMany"
          ? (...args: unknown[]) =>
            metered(
              () => withinDeadline(call(...args), deadlineMs, String(prop)),
              () => `${String(prop)} ${describe(args[0])}`,
            )
          : call;
        bound.set(prop, fn);
      }
      return fn;
    },
  });
  versioned.add(wrapped);
  return wrapped;
}
