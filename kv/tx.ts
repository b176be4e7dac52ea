/**
 * Optimistic transactions over Deno KV.
 *
 * Every entry read through a `Tx` becomes a `.check()` of the final commit, so a
 * read-then-write can never act on stale data: if anything it read changed, the
 * whole function runs again on fresh reads. Mutations are buffered and committed as one
 * atomic, asserted against the portable limits of kv/limits.ts. Nothing is carried from
 * one attempt, or one transaction, to the next: every attempt reads the store.
 */
import type { EntriesOf, NamedEntry, NamedRead, ValueOf } from "./key_values.ts";
import { READ_VERSION_KEY } from "./keys.ts";
import { keySize, KV_LIMITS, valueSize } from "./limits.ts";
import { flattenNamed, readMany, unflattenNamed } from "./read_many.ts";
import { currentMeter } from "./meter.ts";

/** Thrown when an atomic would exceed the portable KV limits. A programming error. */
export class AtomicLimitError extends Error {}

/** A key's identity within one transaction (keys hold no bigint: kv/keys.ts). */
const idOf = (key: Deno.KvKey): string => JSON.stringify(key);

export class Tx {
  readonly kv: Deno.Kv;
  #checks = new Map<string, Deno.AtomicCheck>();
  /** The staged write of each key: the last set or delete wins. */
  #mutations = new Map<string, Deno.KvMutation>();
  /**
   * Every entry this attempt read: a key read again is answered from here, without a KV
   * call, so a function can read ahead, in one batch, keys that code it calls reads later.
   */
  #read = new Map<string, Deno.KvEntryMaybe<unknown>>();

  constructor(kv: Deno.Kv) {
    this.kv = kv;
  }

  /** Reads a key and makes the commit depend on it being unchanged. */
  get<K extends Deno.KvKey>(key: K): Promise<Deno.KvEntryMaybe<ValueOf<K>>>;
  /** An untyped key read as `T` (prefer a key whose builder declares its value). */
  get<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>>;
  async get(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<unknown>> {
    return (await this.getMany([key]))[0];
  }

  /**
   * Reads named keys in one batch (as `getMany`) and answers their entries by the same names,
   * each with its key's value type: a name given a list of keys gets the list of entries, a
   * name given null gets null.
   */
  async getNamed<const R extends Record<string, NamedRead>>(
    named: R,
  ): Promise<{ -readonly [N in keyof R]: NamedEntry<R[N]> }> {
    return unflattenNamed(named, await this.getMany(flattenNamed(named)));
  }

  /**
   * Reads several keys (any number; batched by 10) and makes the commit depend on each being
   * unchanged (the first read of a key counts).
   */
  getMany<const Ks extends readonly Deno.KvKey[]>(keyList: Ks): Promise<EntriesOf<Ks>>;
  /** Untyped keys read as `T` (prefer keys whose builders declare their value). */
  getMany<T>(keyList: readonly Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]>;
  async getMany(keyList: readonly Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
    const entries = await this.#entries(keyList);
    for (const { key, versionstamp } of entries) {
      const id = idOf(key);
      if (!this.#checks.has(id)) this.#checks.set(id, { key, versionstamp });
    }
    return entries;
  }

  /** The entries of `keyList`: those read before in this attempt as read, the rest in one batch. */
  async #entries(keyList: readonly Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
    const missing = keyList.filter((k) => !this.#read.has(idOf(k)));
    if (missing.length) {
      for (const e of await readMany(this.kv, missing)) this.#read.set(idOf(e.key), e);
    }
    return keyList.map((k) => this.#read.get(idOf(k))!);
  }

  /**
   * Makes the commit depend on `key` being absent, without reading it (a key this commit
   * creates at a position found by an unchecked read: a competing writer fails the check).
   */
  absent(key: Deno.KvKey): this {
    const id = idOf(key);
    if (!this.#checks.has(id)) this.#checks.set(id, { key, versionstamp: null });
    return this;
  }

  /** Reads a key without making the commit depend on it. */
  peek<K extends Deno.KvKey>(key: K): Promise<Deno.KvEntryMaybe<ValueOf<K>>>;
  peek<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>>;
  async peek(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<unknown>> {
    return (await this.#entries([key]))[0];
  }

  /** Reads keys without making the commit depend on them, in one batch (see `peek`). */
  peekMany<const Ks extends readonly Deno.KvKey[]>(keyList: Ks): Promise<EntriesOf<Ks>>;
  peekMany(keyList: readonly Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
    return this.#entries(keyList);
  }

  /** Stages a write of `value`, which must have the value type of the key. */
  set<K extends Deno.KvKey>(key: K, value: ValueOf<K>, options?: { expireIn?: number }): this {
    this.#mutations.set(idOf(key), { type: "set", key, value, expireIn: options?.expireIn });
    return this;
  }

  delete(key: Deno.KvKey): this {
    this.#mutations.set(idOf(key), { type: "delete", key });
    return this;
  }

  /** This transaction's own staged write of `key`: its value (null when deleted), or undefined. */
  own<K extends Deno.KvKey>(key: K): { value: ValueOf<K> | null } | undefined;
  own<T>(key: Deno.KvKey): { value: T | null } | undefined;
  own(key: Deno.KvKey): { value: unknown } | undefined {
    const staged = this.#mutations.get(idOf(key));
    if (staged?.type === "set") return { value: staged.value };
    return staged ? { value: null } : undefined; // deleted
  }

  get isEmpty(): boolean {
    return this.#mutations.size === 0;
  }

  /**
   * Builds the atomic, asserting the portable limits. One mutation and its key are kept for
   * the read-version key a versioned handle adds to the commit (kv/versioned_kv.ts).
   */
  build(): Deno.AtomicOperation {
    const checks = [...this.#checks.values()];
    const mutations = [...this.#mutations.values()];
    const fail = (what: string) => new AtomicLimitError(`atomic has ${what}`);
    if (checks.length > KV_LIMITS.checksPerAtomic) throw fail(`${checks.length} checks`);
    if (mutations.length + 1 > KV_LIMITS.mutationsPerAtomic) {
      throw fail(`${mutations.length} mutations and the read-version bump`);
    }
    let keyBytes = keySize(READ_VERSION_KEY);
    let bytes = 0;
    for (const c of checks) keyBytes += keySize(c.key);
    for (const m of mutations) {
      const k = keySize(m.key);
      if (k > KV_LIMITS.keyBytes) throw fail(`a key of ${k} bytes`);
      keyBytes += k;
      const v = m.type === "set" ? valueSize(m.value) : 0;
      if (v > KV_LIMITS.valueBytes) throw fail(`a value of ${v} bytes`);
      bytes += v;
    }
    if (keyBytes > KV_LIMITS.keyBytesPerAtomic) throw fail(`${keyBytes} key bytes`);
    if (bytes + keyBytes > KV_LIMITS.bytesPerAtomic) throw fail(`${bytes + keyBytes} bytes`);
    return this.kv.atomic().check(...checks).mutate(...mutations);
  }
}

const locks = new Map<string, Promise<unknown>>();

/**
 * Serialises work on one name within this process. Correctness never depends on it
 * (the KV checks do that; other processes never see it); it only spares hot keys from
 * retry storms within one process.
 */
async function withLocalLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const mine = (locks.get(name) ?? Promise.resolve()).then(fn);
  const settled = mine.catch(() => {});
  locks.set(name, settled);
  try {
    return await mine;
  } finally {
    if (locks.get(name) === settled) locks.delete(name);
  }
}

/** Raised when a transaction kept conflicting; mapped to 503 UNAVAILABLE at the edge. */
export class TxConflictError extends Error {}

/** True for the embedded store's busy error (another connection holds the write lock). */
export function isLockedError(e: unknown): boolean {
  return e instanceof Error && /database is locked|SQLITE_BUSY/i.test(e.message);
}

/** The pause before attempt `attempt + 1`: short, random, growing (ms). */
function backoff(attempt: number): Promise<void> {
  const wait = Math.min(50, 1 + Math.random() * 2 ** Math.min(attempt, 5));
  return new Promise((r) => setTimeout(r, wait));
}

/**
 * Commits the atomic `build` makes, made anew and tried again while another process holds
 * the embedded store's write lock (`database is locked`). For writes that `transact` does not
 * fit (an atomic built by other code); its checks, if any, are answered as usual (`ok`).
 */
export async function commitRetryingLock(
  build: () => Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      return await build().commit();
    } catch (e) {
      if (!isLockedError(e)) throw e;
    }
    await backoff(attempt);
  }
  throw new TxConflictError("the store stayed locked");
}

/**
 * Runs `fn` against a fresh Tx and commits its buffered writes atomically, retrying
 * the whole function (with a short random back-off) when any entry it read has changed,
 * or while another process holds the embedded store's write lock.
 * Errors thrown by `fn` abort without writing. Returns what `fn` returned plus the commit
 * versionstamp (null when `fn` wrote nothing).
 */
export async function transact<T>(
  kv: Deno.Kv,
  fn: (tx: Tx) => Promise<T>,
  options: {
    /** In-process lock name for hot keys (e.g. a board head): an optimisation only. */
    lock?: string;
  } = {},
): Promise<{ value: T; versionstamp: string | null }> {
  const run = async () => {
    for (let attempt = 0; attempt < 60; attempt++) {
      const tx = new Tx(kv);
      const value = await fn(tx);
      if (tx.isEmpty) return { value, versionstamp: null };
      const meter = currentMeter();
      try {
        const res = await tx.build().commit();
        if (res.ok) return { value, versionstamp: res.versionstamp };
        if (meter) meter.conflicts++;
      } catch (e) {
        if (!isLockedError(e)) throw e;
        if (meter) meter.busy++;
      }
      if (meter) meter.retries++;
      await backoff(attempt);
    }
    throw new TxConflictError("transaction kept conflicting");
  };
  return options.lock ? await withLocalLock(options.lock, run) : await run();
}
