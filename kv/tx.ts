/**
 * Optimistic transactions over Deno KV (STYLE.md #2).
 *
 * Every entry read through a `Tx` becomes a `.check()` of the final commit, so a
 * read-then-write can never act on stale data: if anything it read changed, the
 * whole function runs again. Mutations are buffered and committed as one atomic.
 * The atomic is asserted against the portable limits of DESIGN.md §11.
 */
import { type EntryMemory, entryMemory } from "./entry_memory.ts";
import { keySize, KV_LIMITS, valueSize } from "./limits.ts";
import { readVersionBumps } from "./read_versions.ts";

type Mutation =
  | { type: "set"; key: Deno.KvKey; value: unknown; expireIn?: number }
  | { type: "delete"; key: Deno.KvKey }
  | { type: "sum"; key: Deno.KvKey; value: bigint };

/** Thrown when an atomic would exceed the portable KV limits. A programming error. */
export class AtomicLimitError extends Error {}

export class Tx {
  readonly kv: Deno.Kv;
  #checks = new Map<string, Deno.AtomicCheck>();
  #mutations: Mutation[] = [];
  #written = new Map<string, unknown>();
  /** Entries believed current (read before the lock, or remembered from this process's commits). */
  #believed: Map<string, Deno.KvEntryMaybe<unknown>> | null;
  #memory: EntryMemory | null;
  #usedBelieved = false;

  #believe: boolean;
  #keep: (key: Deno.KvKey) => boolean;

  /**
   * `seed`: entries read before the transaction (used instead of reading them again).
   * `memory`: entries remembered from earlier commits; served only when `believe` is true,
   * updated after every commit either way.
   */
  constructor(
    kv: Deno.Kv,
    opts: {
      seed?: Deno.KvEntryMaybe<unknown>[];
      memory?: EntryMemory;
      believe?: boolean;
      keep?: (key: Deno.KvKey) => boolean;
    } = {},
  ) {
    this.kv = kv;
    this.#keep = opts.keep ?? (() => true);
    this.#believe = opts.believe ?? true;
    this.#believed = opts.seed && this.#believe
      ? new Map(opts.seed.map((e) => [Tx.#id(e.key), e]))
      : null;
    this.#memory = opts.memory ?? null;
  }

  static #id(key: Deno.KvKey): string {
    return JSON.stringify(key, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
  }

  /** A believed entry for `key` (checked like any read: a stale one fails the commit). */
  #believedEntry<T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> | undefined {
    if (!this.#believe || (!this.#memory && !this.#believed)) return undefined;
    const id = Tx.#id(key);
    const entry = this.#memory?.get(id) ?? this.#believed?.get(id);
    if (entry) this.#usedBelieved = true;
    return entry as Deno.KvEntryMaybe<T> | undefined;
  }

  /** True when a read was answered from believed entries rather than from the store. */
  get usedBelieved(): boolean {
    return this.#usedBelieved;
  }

  #record(entry: Deno.KvEntryMaybe<unknown>) {
    const id = Tx.#id(entry.key);
    if (!this.#checks.has(id)) {
      this.#checks.set(id, { key: entry.key, versionstamp: entry.versionstamp });
    }
  }

  /** Reads a key and makes the commit depend on it being unchanged. */
  async get<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    const entry = this.#believedEntry<T>(key) ?? await this.kv.get<T>(key);
    this.#record(entry);
    return entry;
  }

  /** Reads several keys (any number; batched by 10, believed entries not read again) and checks them all. */
  async getMany<T>(keyList: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
    const out: (Deno.KvEntryMaybe<T> | undefined)[] = keyList.map((k) => this.#believedEntry<T>(k));
    const missing: number[] = [];
    out.forEach((e, i) => {
      if (!e) missing.push(i);
    });
    for (let i = 0; i < missing.length; i += KV_LIMITS.keysPerGetMany) {
      const idx = missing.slice(i, i + KV_LIMITS.keysPerGetMany);
      const part = await this.kv.getMany<T[]>(idx.map((j) => keyList[j]));
      part.forEach((e, j) => (out[idx[j]] = e as Deno.KvEntryMaybe<T>));
    }
    for (const e of out) this.#record(e!);
    return out as Deno.KvEntryMaybe<T>[];
  }

  /**
   * Reads a key without making the commit depend on it. On a first attempt given a
   * `seed`, a seeded entry answers (read moments before, and unchecked either way).
   */
  peek<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    const seeded = this.#believe ? this.#believed?.get(Tx.#id(key)) : undefined;
    if (seeded) return Promise.resolve(seeded as Deno.KvEntryMaybe<T>);
    return this.kv.get<T>(key);
  }

  /** Adds a check for an entry read elsewhere. */
  check(entry: Deno.AtomicCheck): this {
    this.#record(entry as Deno.KvEntryMaybe<unknown>);
    return this;
  }

  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }): this {
    this.#mutations.push({ type: "set", key, value, expireIn: options?.expireIn });
    this.#written.set(Tx.#id(key), value);
    return this;
  }

  delete(key: Deno.KvKey): this {
    this.#mutations.push({ type: "delete", key });
    this.#written.set(Tx.#id(key), undefined);
    return this;
  }

  /** Adds to a KvU64 counter (no check needed: sums commute). */
  sum(key: Deno.KvKey, value: bigint): this {
    this.#mutations.push({ type: "sum", key, value });
    return this;
  }

  /** The value this transaction has already set for a key, if any. */
  pending<T>(key: Deno.KvKey): T | undefined {
    return this.#written.get(Tx.#id(key)) as T | undefined;
  }

  get mutationCount(): number {
    return this.#mutations.length;
  }

  /**
   * Builds the atomic, asserting the portable limits — counting the read-cache version
   * keys a versioned handle adds to it (kv/versioned_kv.ts).
   */
  build(): Deno.AtomicOperation {
    const checks = [...this.#checks.values()];
    const bumps: Mutation[] = readVersionBumps(this.#mutations.map((m) => m.key))
      .map((key) => ({ type: "set", key, value: 1 }));
    assertAtomicLimits(checks, [...this.#mutations, ...bumps]);
    const op = this.kv.atomic();
    for (const c of checks) op.check(c);
    for (const m of this.#mutations) {
      if (m.type === "set") {
        op.set(m.key, m.value, m.expireIn ? { expireIn: m.expireIn } : undefined);
      } else if (m.type === "delete") op.delete(m.key);
      else op.sum(m.key, m.value);
    }
    return op;
  }

  get isEmpty(): boolean {
    return this.#mutations.length === 0;
  }

  /**
   * After a successful commit: remembers, in this transaction's memory, every entry it both
   * read and wrote, as the commit left it. After a failed one: forgets every key it read.
   */
  settleMemory(versionstamp: string | null): void {
    const memory = this.#memory;
    if (!memory) return;
    if (versionstamp === null) {
      for (const id of this.#checks.keys()) memory.forget(id);
      return;
    }
    for (const m of this.#mutations) {
      const id = Tx.#id(m.key);
      // Only what this commit both read and wrote is known exactly; anything else it wrote
      // is no longer what memory may hold.
      if (!this.#checks.has(id) || m.type === "sum" || !this.#keep(m.key)) memory.forget(id);
      else if (m.type === "set") memory.remember(id, { key: m.key, value: m.value, versionstamp });
      else memory.remember(id, { key: m.key, value: null, versionstamp: null });
    }
  }
}

/** Throws AtomicLimitError when an atomic would break DESIGN.md §11 limits. */
export function assertAtomicLimits(checks: Deno.AtomicCheck[], mutations: Mutation[]): void {
  if (checks.length > KV_LIMITS.checksPerAtomic) {
    throw new AtomicLimitError(
      `atomic has ${checks.length} checks (max ${KV_LIMITS.checksPerAtomic})`,
    );
  }
  if (mutations.length > KV_LIMITS.mutationsPerAtomic) {
    throw new AtomicLimitError(`atomic has ${mutations.length} mutations`);
  }
  let keyBytes = 0;
  let bytes = 0;
  for (const c of checks) keyBytes += keySize(c.key);
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
}

const locks = new Map<string, Promise<void>>();

/**
 * Serialises work on one name within this process. Correctness never depends on it
 * (the KV checks do that); it only spares hot keys from retry storms.
 */
export async function withLocalLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
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

export interface TransactOptions {
  /** In-process lock name for hot keys (e.g. a board head). */
  lock?: string;
  /** Attempts before giving up with a 503. */
  attempts?: number;
  /**
   * Entries the caller read before taking the lock: the first attempt uses them instead
   * of reading again. They are checked like any read, so a stale one only costs a retry.
   */
  seed?: Deno.KvEntryMaybe<unknown>[];
  /**
   * With `lock`: remember the entries each commit read and wrote (its hot keys: a board
   * head, a counter, a rate window) and let the next first attempt under the same lock use
   * them without a read. Checked like any read: a write from elsewhere costs one retry.
   * A function names the keys worth remembering (not write-once keys nobody reads again).
   */
  remember?: boolean | ((key: Deno.KvKey) => boolean);
}

/** Raised when a transaction kept conflicting; mapped to 503 UNAVAILABLE at the edge. */
export class TxConflictError extends Error {}

function isLockedError(e: unknown): boolean {
  return e instanceof Error && /database is locked|SQLITE_BUSY/i.test(e.message);
}

/**
 * Runs `fn` against a fresh Tx and commits its buffered writes atomically, retrying
 * the whole function when any entry it read has changed. Errors thrown by `fn`
 * abort without writing. Returns what `fn` returned plus the commit versionstamp.
 */
export async function transact<T>(
  kv: Deno.Kv,
  fn: (tx: Tx) => Promise<T>,
  options: TransactOptions = {},
): Promise<{ value: T; versionstamp: string | null }> {
  const run = async () => {
    const attempts = options.attempts ?? 60;
    const memory = options.remember && options.lock ? entryMemory(kv, options.lock) : undefined;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const tx = new Tx(kv, {
        seed: options.seed,
        memory,
        believe: attempt === 0,
        keep: typeof options.remember === "function" ? options.remember : undefined,
      });
      let value: T;
      try {
        value = await fn(tx);
      } catch (e) {
        // A refusal decided on believed entries is never checked by a commit: decide it
        // again on fresh reads before answering with it.
        if (tx.usedBelieved) continue;
        throw e;
      }
      if (tx.isEmpty) {
        if (tx.usedBelieved) continue; // the same for an answer that writes nothing
        return { value, versionstamp: null };
      }
      try {
        const res = await tx.build().commit();
        tx.settleMemory(res.ok ? res.versionstamp : null);
        if (res.ok) return { value, versionstamp: res.versionstamp };
      } catch (e) {
        memory?.forgetAll();
        if (!isLockedError(e)) throw e;
      }
      // A stale belief is not contention: read afresh at once.
      if (tx.usedBelieved) continue;
      const wait = Math.min(50, 1 + Math.random() * 2 ** Math.min(attempt, 5));
      await new Promise((r) => setTimeout(r, wait));
    }
    throw new TxConflictError("transaction kept conflicting");
  };
  return options.lock ? await withLocalLock(options.lock, run) : await run();
}

/**
 * Deletes every key under `prefix` in atomics of at most `batch` deletions, so the
 * work survives a crash midway (re-run it to resume). Returns how many were deleted.
 */
export async function deleteRange(kv: Deno.Kv, prefix: Deno.KvKey, batch = 200): Promise<number> {
  let total = 0;
  while (true) {
    const keysToDelete: Deno.KvKey[] = [];
    for await (const e of kv.list({ prefix }, { limit: batch })) keysToDelete.push(e.key);
    if (keysToDelete.length === 0) return total;
    const op = kv.atomic();
    for (const k of keysToDelete) op.delete(k);
    await op.commit();
    total += keysToDelete.length;
  }
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
