/**
 * Optimistic transactions over Deno KV.
 *
 * Every entry read through a `Tx` becomes a `.check()` of the final commit, so a
 * read-then-write can never act on stale data: if anything it read changed, the
 * whole function runs again on fresh reads. Mutations are buffered and committed as one
 * atomic, asserted against the portable limits of kv/atomic_limits.ts. Nothing is carried from
 * one attempt, or one transaction, to the next: every attempt reads the store.
 */
import type { EntriesOf, NamedEntry, NamedRead, ValueOf } from "./key_values.ts";
import { READ_VERSION_KEY } from "./keys.ts";
import { keySize, KV_LIMITS, valueSize } from "./atomic_limits.ts";
import { flattenNamed, readMany, unflattenNamed } from "./read_many.ts";
import { currentMeter } from "./meter.ts";
import { inTurn } from "./commit_turns.ts";

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
   * Every entry this attempt has read or is reading (`prefetch`, `get*`, `peek`), by key: a
   * key is read once per attempt, and a later read of it is answered from here at no cost.
   */
  #read = new Map<string, Promise<Deno.KvEntryMaybe<unknown>>>();

  constructor(kv: Deno.Kv) {
    this.kv = kv;
  }

  /** Entries of `keyList`: from this attempt's reads, the others read now in one batch. */
  #entries(keyList: readonly Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>>[] {
    const missing = keyList.filter((k, i) => {
      const id = idOf(k);
      return !this.#read.has(id) && keyList.findIndex((o) => idOf(o) === id) === i;
    });
    if (missing.length > 0) {
      const batch = readMany(this.kv, missing);
      batch.catch(() => {}); // awaited below; a failure rejects every read of the batch
      missing.forEach((k, i) => this.#read.set(idOf(k), batch.then((es) => es[i])));
    }
    return keyList.map((k) => this.#read.get(idOf(k))!);
  }

  /**
   * Starts reading `keyList` (one batch, several when over the `getMany` limit) without
   * making the commit depend on it: a planned read. A later `get`/`getMany`/`peek` of one of
   * these keys in this attempt costs no round trip; a `get` then makes the commit depend on
   * the entry as it was read here. So a read plan can be sent in one batch up front, and the
   * code that decides keeps reading key by key.
   */
  prefetch(keyList: readonly Deno.KvKey[]): Promise<void> {
    const all = Promise.all(this.#entries(keyList)).then(() => {});
    all.catch(() => {});
    return all;
  }

  /**
   * Lists `selector` (one call, at most `limit` entries) as a planned read, like `prefetch`:
   * each listed entry answers a later `get`/`peek` of its key in this attempt at no cost, and a
   * `get` then makes the commit depend on the entry as listed. A key read before keeps its
   * first read; a key of the range the listing did not return is read when asked for.
   */
  prefetchList(selector: Deno.KvListSelector, limit: number): Promise<void> {
    const listed = Array.fromAsync(this.kv.list(selector, { limit }));
    const all = listed.then((entries) => {
      for (const e of entries) {
        const id = idOf(e.key);
        if (!this.#read.has(id)) this.#read.set(id, Promise.resolve(e));
      }
    });
    all.catch(() => {});
    return all;
  }

  /**
   * Takes `entry`, read before this transaction began, as this attempt's read of its key: a
   * later `get` of the key answers it at no cost and makes the commit depend on it as it was
   * read then. For a first attempt only (a retry, after a failed check, reads afresh).
   */
  seen(entry: Deno.KvEntryMaybe<unknown>): this {
    const id = idOf(entry.key);
    if (!this.#read.has(id)) this.#read.set(id, Promise.resolve(entry));
    return this;
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
    const entries = await Promise.all(this.#entries(keyList));
    for (const { key, versionstamp } of entries) {
      const id = idOf(key);
      if (!this.#checks.has(id)) this.#checks.set(id, { key, versionstamp });
    }
    return entries;
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

  /** Reads a key without making the commit depend on it (answered by a planned read if any). */
  peek<K extends Deno.KvKey>(key: K): Promise<Deno.KvEntryMaybe<ValueOf<K>>>;
  peek<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>>;
  peek(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<unknown>> {
    return this.#entries([key])[0];
  }

  /** Reads keys without making the commit depend on them, in one batch (see `peek`). */
  peekMany<const Ks extends readonly Deno.KvKey[]>(keyList: Ks): Promise<EntriesOf<Ks>>;
  peekMany(keyList: readonly Deno.KvKey[]): Promise<Deno.KvEntryMaybe<unknown>[]> {
    return Promise.all(this.#entries(keyList));
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
 * the embedded store's write lock (`database is locked`). Its checks, if any, are answered as
 * usual (`ok`): a store that was locked never looked at them, so the same checks and writes
 * go again, and what changed meanwhile fails a check as it would have. Each try again counts
 * as a busy retry on the current meter.
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
    const meter = currentMeter();
    if (meter) {
      meter.busy++;
      meter.retries++;
    }
    await backoff(attempt);
  }
  throw new TxConflictError("the store stayed locked");
}

/**
 * Runs `fn` against a fresh Tx and commits its buffered writes atomically, retrying
 * the whole function (with a short random back-off) when any entry it read has changed;
 * while another process holds the embedded store's write lock, only the commit is sent again
 * (`commitRetryingLock`), but for a transaction on hot keys (`lock`), which runs again on
 * fresh reads. A transaction on hot keys runs one attempt at a time per lock name: on a store
 * file each attempt whole in a turn of the commit lock, which other processes' commits wait
 * for (kv/commit_turns.ts), elsewhere under an in-process lock.
 * Errors thrown by `fn` abort without writing. Returns what `fn` returned plus the commit
 * versionstamp (null when `fn` wrote nothing).
 */
export function transact<T>(
  kv: Deno.Kv,
  fn: (tx: Tx) => Promise<T>,
  options: {
    /** Lock name for hot keys (e.g. a board head): one attempt at a time (see above). */
    lock?: string;
    /**
     * Queue name for one hot key that only some writes share (a message's summary under many
     * votes): this process runs the transactions of one queue one after the other, so they
     * do not keep failing each other's checks; unlike `lock` it never takes the store file's
     * commit turn, and transactions of other queues never wait for it. Between processes only
     * the checks order them.
     */
    queue?: string;
  } = {},
): Promise<{ value: T; versionstamp: string | null }> {
  const run = () => transactPrepared(kv, () => Promise.resolve(), (tx) => fn(tx), options);
  return options.queue ? withLocalLock(`queue ${options.queue}`, run) : run();
}

/**
 * `transact` in two parts, so that an in-process lock is held only for what needs it:
 * `prepare` reads (and may stage) what does not depend on the lock's hot keys, and `fn`
 * reads the hot keys and decides. On the first attempt `prepare` starts before the lock is
 * taken, while other writers of this process hold it; `fn` runs under the lock and gets
 * `prepare`'s answer as a promise, so it can send its own first reads before awaiting it
 * (with a free lock both go out in one round trip). Safe because every entry either part
 * reads with `tx.get*` is a check of the one commit: what changed while waiting for the lock
 * fails the commit, and the retry (under the lock, `prepare` then `fn` again on fresh reads)
 * sees it. Errors thrown by either part abort without writing.
 */
export async function transactPrepared<P, T>(
  kv: Deno.Kv,
  prepare: (tx: Tx) => Promise<P>,
  fn: (tx: Tx, prepared: Promise<P>) => Promise<T>,
  options: {
    /** Lock name for hot keys (e.g. a board head): one attempt at a time (see above). */
    lock?: string;
  } = {},
): Promise<{ value: T; versionstamp: string | null }> {
  const start = () => {
    const tx = new Tx(kv);
    const prepared = prepare(tx);
    prepared.catch(() => {}); // `fn` may throw before awaiting it; then nothing else reads it
    return { tx, prepared };
  };
  const first = start();
  type Done = { value: T; versionstamp: string | null };
  /** One attempt: its answer, or null when it must run again. */
  const once = async (attempt: number): Promise<Done | null> => {
    const { tx, prepared } = attempt === 0 ? first : start();
    let value: T;
    try {
      value = await fn(tx, prepared);
    } finally {
      await prepared.catch(() => {}); // no work of this attempt outlives it
    }
    if (tx.isEmpty) return { value, versionstamp: null };
    const meter = currentMeter();
    if (options.lock) {
      // Hot keys: the commit goes at once (in its turn on a store file: kv/commit_turns.ts),
      // and a busy store runs the whole function again: what it read is likely to change
      // while it waits, and reads made right after the other commit see it.
      try {
        const res = await tx.build().commit();
        if (res.ok) return { value, versionstamp: res.versionstamp };
        if (meter) meter.conflicts++;
      } catch (e) {
        if (!isLockedError(e)) throw e;
        if (meter) meter.busy++;
      }
    } else {
      // A busy store sends the same commit again, not the whole function: it has not
      // answered the checks, so nothing read is known to have changed.
      const res = await commitRetryingLock(() => tx.build());
      if (res.ok) return { value, versionstamp: res.versionstamp };
      if (meter) meter.conflicts++;
    }
    if (meter) meter.retries++;
    return null;
  };
  // Hot keys on a store file: each attempt runs whole in a turn of the commit lock, after the
  // same lock's earlier work in it (kv/commit_turns.ts); elsewhere under the in-process lock.
  const turn = options.lock ? inTurn(kv) : undefined;
  const run = async () => {
    for (let attempt = 0; attempt < 60; attempt++) {
      const done = turn ? await turn(options.lock!, () => once(attempt)) : await once(attempt);
      if (done) return done;
      await backoff(attempt);
    }
    throw new TxConflictError("transaction kept conflicting");
  };
  return options.lock && !turn ? await withLocalLock(options.lock, run) : await run();
}
