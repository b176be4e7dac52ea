/**
 * Optimistic transactions over Deno KV.
 *
 * Every entry read through a `Tx` becomes a `.check()` of the final commit, so a
 * read-then-write can never act on stale data: if anything it read changed, the
 * whole function runs again on fresh reads. Mutations are buffered and committed as one
 * atomic, asserted against the portable limits of kv/limits.ts. Nothing is carried from
 * one attempt, or one transaction, to the next: every attempt reads the store.
 */
import { keySize, KV_LIMITS, valueSize } from "./limits.ts";
import { readVersionBumps } from "./read_versions.ts";

type Mutation =
  | { type: "set"; id: string; key: Deno.KvKey; value: unknown; expireIn?: number }
  | { type: "delete"; id: string; key: Deno.KvKey }
  | { type: "sum"; id: string; key: Deno.KvKey; value: bigint };

/** Thrown when an atomic would exceed the portable KV limits. A programming error. */
export class AtomicLimitError extends Error {}

/** A key's identity within one transaction. */
function idOf(key: Deno.KvKey): string {
  try {
    return JSON.stringify(key); // the common case: no bigint part
  } catch {
    return JSON.stringify(key, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
  }
}

export class Tx {
  readonly kv: Deno.Kv;
  #checks = new Map<string, Deno.AtomicCheck>();
  #mutations: Mutation[] = [];
  /** This transaction's own latest write per key (undefined: deleted). */
  #written = new Map<string, unknown>();

  constructor(kv: Deno.Kv) {
    this.kv = kv;
  }

  /** Makes the commit depend on an entry read (the first read of a key counts). */
  #record(entry: Deno.KvEntryMaybe<unknown>): void {
    const id = idOf(entry.key);
    if (!this.#checks.has(id)) {
      this.#checks.set(id, { key: entry.key, versionstamp: entry.versionstamp });
    }
  }

  /** Reads a key and makes the commit depend on it being unchanged. */
  async get<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    const entry = await this.kv.get<T>(key);
    this.#record(entry);
    return entry;
  }

  /** Reads several keys (any number; batched by 10) and checks them all. */
  async getMany<T>(keyList: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
    const out: Deno.KvEntryMaybe<T>[] = [];
    for (let i = 0; i < keyList.length; i += KV_LIMITS.keysPerGetMany) {
      const part = await this.kv.getMany<T[]>(keyList.slice(i, i + KV_LIMITS.keysPerGetMany));
      for (const e of part) {
        this.#record(e);
        out.push(e as Deno.KvEntryMaybe<T>);
      }
    }
    return out;
  }

  /** Reads a key without making the commit depend on it. */
  peek<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    return this.kv.get<T>(key);
  }

  /** Adds a check for an entry read elsewhere. */
  check(entry: Deno.AtomicCheck): this {
    this.#record(entry as Deno.KvEntryMaybe<unknown>);
    return this;
  }

  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }): this {
    const id = idOf(key);
    this.#mutations.push({ type: "set", id, key, value, expireIn: options?.expireIn });
    this.#written.set(id, value);
    return this;
  }

  delete(key: Deno.KvKey): this {
    const id = idOf(key);
    this.#mutations.push({ type: "delete", id, key });
    this.#written.set(id, undefined);
    return this;
  }

  /** Adds to a KvU64 counter (no check needed: sums commute). */
  sum(key: Deno.KvKey, value: bigint): this {
    this.#mutations.push({ type: "sum", id: idOf(key), key, value });
    return this;
  }

  /** The value this transaction has already set for a key, if any. */
  pending<T>(key: Deno.KvKey): T | undefined {
    return this.own<T>(key)?.value ?? undefined;
  }

  /** This transaction's own staged write of `key`: its value (null when deleted), or undefined. */
  own<T>(key: Deno.KvKey): { value: T | null } | undefined {
    const id = idOf(key);
    if (!this.#written.has(id)) return undefined;
    return { value: (this.#written.get(id) ?? null) as T | null };
  }

  get mutationCount(): number {
    return this.#mutations.length;
  }

  get isEmpty(): boolean {
    return this.#mutations.length === 0;
  }

  /**
   * The mutations to commit: the last set or delete of a key wins; a key that is only
   * summed keeps its sums in order (a mix of both keeps every mutation, in order).
   */
  #merged(): Mutation[] {
    const summed = new Set<string>();
    for (const m of this.#mutations) if (m.type === "sum") summed.add(m.id);
    const last = new Map<string, number>();
    this.#mutations.forEach((m, i) => last.set(m.id, i));
    return this.#mutations.filter((m, i) => summed.has(m.id) || last.get(m.id) === i);
  }

  /**
   * Builds the atomic, asserting the portable limits — counting the read-cache version key
   * a versioned handle adds to it (kv/versioned_kv.ts).
   */
  build(): Deno.AtomicOperation {
    const checks = [...this.#checks.values()];
    const mutations = this.#merged();
    const bumps = readVersionBumps(mutations.map((m) => m.key));
    if (checks.length > KV_LIMITS.checksPerAtomic) {
      throw new AtomicLimitError(
        `atomic has ${checks.length} checks (max ${KV_LIMITS.checksPerAtomic})`,
      );
    }
    if (mutations.length + bumps.length > KV_LIMITS.mutationsPerAtomic) {
      throw new AtomicLimitError(`atomic has ${mutations.length + bumps.length} mutations`);
    }
    let keyBytes = 0;
    let bytes = 0;
    for (const k of [...checks.map((c) => c.key), ...bumps]) keyBytes += keySize(k);
    for (const m of mutations) {
      const k = keySize(m.key);
      if (k > KV_LIMITS.keyBytes) throw new AtomicLimitError(`key of ${k} bytes`);
      keyBytes += k;
      if (m.type === "set") {
        const v = valueSize(m.value);
        if (v > KV_LIMITS.valueBytes) throw new AtomicLimitError(`value of ${v} bytes`);
        bytes += v;
      }
    }
    if (keyBytes > KV_LIMITS.keyBytesPerAtomic) throw new AtomicLimitError(`${keyBytes} key bytes`);
    if (bytes + keyBytes > KV_LIMITS.bytesPerAtomic) throw new AtomicLimitError(`${bytes} bytes`);
    const op = this.kv.atomic();
    for (const c of checks) op.check(c);
    for (const m of mutations) {
      if (m.type === "set") {
        op.set(m.key, m.value, m.expireIn ? { expireIn: m.expireIn } : undefined);
      } else if (m.type === "delete") op.delete(m.key);
      else op.sum(m.key, m.value);
    }
    return op;
  }
}

const locks = new Map<string, Promise<void>>();

/**
 * Serialises work on one name within this process. Correctness never depends on it
 * (the KV checks do that; other processes never see it); it only spares hot keys from
 * retry storms within one process.
 */
async function withLocalLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(name) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const chained = prev.then(() => mine);
  locks.set(name, chained);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (locks.get(name) === chained) locks.delete(name);
  }
}

interface TransactOptions {
  /** In-process lock name for hot keys (e.g. a board head): an optimisation only. */
  lock?: string;
  /** Attempts before giving up with a 503. */
  attempts?: number;
}

/** Raised when a transaction kept conflicting; mapped to 503 UNAVAILABLE at the edge. */
export class TxConflictError extends Error {}

/** True for the embedded store's busy error (another connection holds the write lock). */
export function isLockedError(e: unknown): boolean {
  return e instanceof Error && /database is locked|SQLITE_BUSY/i.test(e.message);
}

/**
 * Commits a one-off atomic that `build` makes (records written once, outside `transact`),
 * making it again after a short back-off while another process holds the embedded store's
 * write lock (two processes starting on a new file at once).
 */
export async function commitUnlocked(
  build: () => Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  for (let attempt = 0;; attempt++) {
    try {
      return await build().commit();
    } catch (e) {
      if (!isLockedError(e) || attempt >= 30) throw e;
    }
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 10 * Math.min(attempt + 1, 10)));
  }
}

/**
 * Runs `fn` against a fresh Tx and commits its buffered writes atomically, retrying
 * the whole function (with a short random back-off) when any entry it read has changed.
 * Errors thrown by `fn` abort without writing. Returns what `fn` returned plus the commit
 * versionstamp (null when `fn` wrote nothing).
 */
export async function transact<T>(
  kv: Deno.Kv,
  fn: (tx: Tx) => Promise<T>,
  options: TransactOptions = {},
): Promise<{ value: T; versionstamp: string | null }> {
  const run = async () => {
    const attempts = options.attempts ?? 60;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const tx = new Tx(kv);
      const value = await fn(tx);
      if (tx.isEmpty) return { value, versionstamp: null };
      try {
        const res = await tx.build().commit();
        if (res.ok) return { value, versionstamp: res.versionstamp };
      } catch (e) {
        if (!isLockedError(e)) throw e;
      }
      const wait = Math.min(50, 1 + Math.random() * 2 ** Math.min(attempt, 5));
      await new Promise((r) => setTimeout(r, wait));
    }
    throw new TxConflictError("transaction kept conflicting");
  };
  return options.lock ? await withLocalLock(options.lock, run) : await run();
}

/** Lists every entry under a prefix (for small, bounded sets). */
export async function listAll<T>(
  kv: Deno.Kv,
  selector: Deno.KvListSelector,
  options: Deno.KvListOptions = {},
): Promise<Deno.KvEntry<T>[]> {
  const out: Deno.KvEntry<T>[] = [];
  for await (const e of kv.list<T>(selector, options)) out.push(e);
  return out;
}
