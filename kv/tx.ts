/**
 * Optimistic transactions over Deno KV (STYLE.md #2).
 *
 * Every entry read through a `Tx` becomes a `.check()` of the final commit, so a
 * read-then-write can never act on stale data: if anything it read changed, the
 * whole function runs again. Mutations are buffered and committed as one atomic.
 * The atomic is asserted against the portable limits of DESIGN.md §11.
 */
import { copyValue, type EntryMemory, entryMemory } from "./entry_memory.ts";
import { keySize, KV_LIMITS, valueSize } from "./limits.ts";
import { guardOf } from "./guards.ts";
import { readMany } from "./read_many.ts";
import { readVersionBumps } from "./read_versions.ts";

type Mutation =
  | { type: "set"; id: string; key: Deno.KvKey; value: unknown; expireIn?: number }
  | { type: "delete"; id: string; key: Deno.KvKey }
  | { type: "sum"; id: string; key: Deno.KvKey; value: bigint };

/** How to take back one change of a transaction's staged state (group commits only). */
interface Undo {
  /** A read's trace (check, read key, believed guard) rather than a staged write. */
  read: boolean;
  undo: () => void;
}

/** Thrown when an atomic would exceed the portable KV limits. A programming error. */
export class AtomicLimitError extends Error {}

/**
 * Thrown (in a group commit) when a transaction reads a key an earlier member of the group
 * changed with `sum`: its value is unknown until the commit, so the reader waits for the
 * next group.
 */
class GroupReadConflict extends Error {}

/** Where a transaction's staged state stood before one member of a group ran. */
interface Savepoint {
  mutations: number;
  undo: number;
  keyBytes: number;
  bytes: number;
  maxValue: number;
}

/** A placeholder versionstamp for an entry another member of the group has staged. */
const STAGED = "staged";

/**
 * A placeholder versionstamp for an entry the group commit in flight writes: a check on it
 * becomes a check on that commit's versionstamp once it is known (`build`).
 */
const IN_FLIGHT = "in-flight";

/**
 * What the group commit in flight will leave, for the next group prepared meanwhile
 * (`Tx.inFlight`): its writes (undefined: deleted), the keys whose value it leaves unknown
 * (sums, blind guard writes, read-cache versions), and the guards it believed.
 */
export interface InFlightWrites {
  written: Map<string, unknown>;
  unknown: Set<string>;
  believedGuards: Set<string>;
  /**
   * True when every guard the commit checks was believed. Otherwise a group prepared beside
   * it could believe no guard, nor could any group after that while the pipeline stays full:
   * the next group waits for it to land and reads its guards from memory.
   */
  anchored: boolean;
}

export class Tx {
  readonly kv: Deno.Kv;
  #checks = new Map<string, Deno.AtomicCheck>();
  #mutations: Mutation[] = [];
  #written = new Map<string, unknown>();
  #summed = new Set<string>();
  /** Which member of a group staged each sum (`#member` when it did). */
  #summedBy = new Map<string, number>();
  /** The group member running now (counted by `savepoint`). */
  #member = 0;
  /** Keys read from the store or from believed entries (checked, or covered by a guard). */
  #readIds = new Set<string>();
  /** Guards whose entry came from believed entries (kv/guards.ts). */
  #believedGuards = new Set<string>();
  /** Entries a group read for its members in one batch, served as reads made now. */
  #fetched = new Map<string, Deno.KvEntryMaybe<unknown>>();
  /** Entries believed current (read before the lock, or remembered from this process's commits). */
  #believed: Map<string, Deno.KvEntryMaybe<unknown>> | null;
  #memory: EntryMemory | null;
  #usedBelieved = false;
  #keyBytes = 0;
  #bytes = 0;
  #maxValue = 0;
  #maxKey = 0;
  /** Numbers collected per prefix (`collect`), stored as sorted blocks at the commit. */
  #collected = new Map<string, { prefix: Deno.KvKey; span: number; items: number[] }>();

  #believe: boolean;
  #keep: (key: Deno.KvKey) => boolean;
  /** Group commit: reads see what earlier members of the group staged. */
  #overlay: boolean;
  /** Changes since the group began, to roll one member back (kept only when overlaying). */
  #undo: Undo[] = [];
  /** What the group commit in flight writes: read as if committed, checked against it. */
  #inFlight: InFlightWrites | null;

  /**
   * `seed`: entries read before the transaction (used instead of reading them again).
   * `memory`: entries remembered from earlier commits; served only when `believe` is true,
   * updated after every commit either way. `overlay`: reads answer from the writes
   * already staged in this transaction (a group commit's members see each other's).
   */
  constructor(
    kv: Deno.Kv,
    opts: {
      seed?: Deno.KvEntryMaybe<unknown>[];
      memory?: EntryMemory;
      believe?: boolean;
      keep?: (key: Deno.KvKey) => boolean;
      overlay?: boolean;
      inFlight?: InFlightWrites;
    } = {},
  ) {
    this.kv = kv;
    this.#keep = opts.keep ?? (() => true);
    this.#believe = opts.believe ?? true;
    this.#believed = opts.seed && this.#believe
      ? new Map(opts.seed.map((e) => [Tx.#id(e.key), e]))
      : null;
    this.#memory = opts.memory ?? null;
    this.#overlay = opts.overlay ?? false;
    this.#inFlight = opts.inFlight ?? null;
  }

  /**
   * The entry the group commit in flight leaves for `key` (read as committed; its check
   * waits for that commit's versionstamp). A key it leaves unknown cannot be read before it
   * lands: the member waits for a later group.
   */
  #inFlightEntry<T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> | undefined {
    const f = this.#inFlight;
    if (!f) return undefined;
    const id = Tx.#id(key);
    if (f.unknown.has(id)) throw new GroupReadConflict(id);
    if (!f.written.has(id)) return undefined;
    const value = f.written.get(id);
    if (value === undefined) return { key, value: null, versionstamp: null };
    if (key[0] === "guards" && f.believedGuards.has(id)) {
      this.#addTo(this.#believedGuards, id, true);
    }
    return { key, value: copyValue(value), versionstamp: IN_FLIGHT } as Deno.KvEntryMaybe<T>;
  }

  /**
   * What this transaction's commit, once made, leaves for a group prepared while it is in
   * flight. A guard it writes without having checked it is left unknown: covered keys read
   * by the next group are exact only after a guard whose every change since was checked.
   */
  inFlight(): InFlightWrites {
    const written = new Map<string, unknown>();
    const unknown = new Set<string>();
    const mutations = this.#merged();
    for (const m of mutations) {
      if (m.type === "sum") unknown.add(m.id);
      else if (m.key[0] === "guards" && !this.#checks.has(m.id)) unknown.add(m.id);
      else written.set(m.id, m.type === "set" ? m.value : undefined);
    }
    for (const k of readVersionBumps(mutations.map((m) => m.key))) unknown.add(Tx.#id(k));
    const believedGuards = new Set([...this.#believedGuards].filter((g) => this.#checks.has(g)));
    let anchored = true;
    for (const [id, c] of this.#checks) {
      if (c.key[0] === "guards" && !believedGuards.has(id)) anchored = false;
    }
    return { written, unknown, believedGuards, anchored };
  }

  #log(read: boolean, undo: () => void): void {
    if (this.#overlay) this.#undo.push({ read, undo });
  }

  #addTo(set: Set<string>, id: string, read: boolean): void {
    if (set.has(id)) return;
    set.add(id);
    this.#log(read, () => set.delete(id));
  }

  #stage(id: string, value: unknown, summed: boolean): void {
    if (this.#overlay) {
      const had = this.#written.has(id);
      const prev = this.#written.get(id);
      const wasSummed = this.#summed.has(id);
      this.#log(false, () => {
        if (had) this.#written.set(id, prev);
        else this.#written.delete(id);
        if (wasSummed) this.#summed.add(id);
        else this.#summed.delete(id);
      });
    }
    if (summed) {
      this.#written.delete(id);
      this.#summed.add(id);
      this.#summedBy.set(id, this.#member);
    } else {
      this.#written.set(id, value);
      this.#summed.delete(id);
    }
  }

  static #id(key: Deno.KvKey): string {
    try {
      return JSON.stringify(key); // the common case: no bigint part
    } catch {
      return JSON.stringify(key, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
    }
  }

  /** Adds entries read before this transaction (a group member's own seed). */
  addSeed(seed: Deno.KvEntryMaybe<unknown>[] | undefined): void {
    if (!seed || !this.#believe) return;
    this.#believed ??= new Map();
    for (const e of seed) this.#believed.set(Tx.#id(e.key), e);
  }

  /**
   * A believed entry for `key` (checked like any read: a stale one fails the commit). A key
   * covered by a guard is believed only when its guard was believed too: a remembered entry
   * is exact only while the guard it was remembered under is (kv/guards.ts).
   */
  #believedEntry<T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> | undefined {
    if (!this.#believe || (!this.#memory && !this.#believed)) return undefined;
    const id = Tx.#id(key);
    const guard = guardOf(key);
    // A seed is not validated by the guard (it may be a belief, not a read): never for a
    // covered key, which gets no check of its own.
    const entry = guard
      ? (this.#believedGuards.has(Tx.#id(guard)) ? this.#memory?.get(id) : undefined)
      : this.#memory?.get(id) ?? this.#believed?.get(id);
    if (entry) {
      this.#usedBelieved = true;
      if (key[0] === "guards") this.#addTo(this.#believedGuards, id, true);
    }
    return entry as Deno.KvEntryMaybe<T> | undefined;
  }

  /**
   * Reads, in parallel batches, the keys the members of a group will read that no believed
   * entry answers, so that members do not wait for a store round trip one after another.
   * Only after a guard was believed: a covered key read now is then newer than the guard's
   * version, and any write to it since would fail the guard's check (kv/guards.ts).
   */
  async prefetch(keyList: Deno.KvKey[]): Promise<void> {
    const skip = new Set(this.#believed?.keys() ?? []);
    const got = await readAhead(
      this.kv,
      this.#memory,
      keyList.filter((k) => !this.#fetched.has(Tx.#id(k))),
      skip,
    );
    for (const [id, e] of got) this.#fetched.set(id, e);
  }

  /**
   * Takes entries read ahead while the previous group's commit was in flight, except those
   * of keys that commit wrote (they are no longer what was read).
   */
  adoptFetched(ahead: Map<string, Deno.KvEntryMaybe<unknown>>, writtenBefore: Set<string>): void {
    for (const [id, e] of ahead) if (!writtenBefore.has(id)) this.#fetched.set(id, e);
  }

  /** Ids of every key this transaction writes. */
  get writtenIds(): Set<string> {
    return new Set(this.#mutations.map((m) => m.id));
  }

  /**
   * An entry read for the group: served like a read made now, but for a covered key only
   * once its guard was believed (it was read after that guard's version, kv/guards.ts).
   */
  #fetchedEntry<T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> | undefined {
    if (this.#fetched.size === 0) return undefined;
    const guard = guardOf(key);
    if (guard && !this.#believedGuards.has(Tx.#id(guard))) return undefined;
    return this.#fetched.get(Tx.#id(key)) as Deno.KvEntryMaybe<T> | undefined;
  }

  /** A key's id in the maps of a transaction. */
  static idOf(key: Deno.KvKey): string {
    return Tx.#id(key);
  }

  /** What an earlier member of the group staged for `key`, when overlaying. */
  #staged<T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> | undefined {
    if (!this.#overlay) return undefined;
    const id = Tx.#id(key);
    if (this.#summed.has(id)) {
      // Its own sum: read the store, as a transaction outside a group does.
      if (this.#summedBy.get(id) === this.#member) return undefined;
      throw new GroupReadConflict(id);
    }
    if (!this.#written.has(id)) return undefined;
    const value = this.#written.get(id);
    return (value === undefined
      ? { key, value: null, versionstamp: null }
      : { key, value, versionstamp: STAGED }) as Deno.KvEntryMaybe<T>;
  }

  /** True when a read was answered from believed entries rather than from the store. */
  get usedBelieved(): boolean {
    return this.#usedBelieved;
  }

  /**
   * Makes the commit depend on an entry read. A key covered by a guard needs no check of
   * its own once the guard was read (before it, or in the same `getMany`): any write to it
   * also writes the guard, whose check then fails (kv/guards.ts).
   */
  #record(entry: Deno.KvEntryMaybe<unknown>) {
    const id = Tx.#id(entry.key);
    this.#addTo(this.#readIds, id, true);
    if (this.#checks.has(id)) return;
    const guard = guardOf(entry.key);
    if (guard && this.#checks.has(Tx.#id(guard))) return;
    this.#checks.set(id, { key: entry.key, versionstamp: entry.versionstamp });
    this.#log(true, () => this.#checks.delete(id));
    this.#keyBytes += keySize(entry.key);
  }

  /** Reads a key and makes the commit depend on it being unchanged. */
  async get<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    const staged = this.#staged<T>(key);
    if (staged) return staged;
    const entry = this.#inFlightEntry<T>(key) ?? this.#believedEntry<T>(key) ??
      this.#fetchedEntry<T>(key) ?? await this.kv.get<T>(key);
    this.#record(entry);
    return entry;
  }

  /** Reads several keys (any number; batched by 10, believed entries not read again) and checks them all. */
  async getMany<T>(keyList: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
    const staged = keyList.map((k) => this.#staged<T>(k));
    const out: (Deno.KvEntryMaybe<T> | undefined)[] = keyList.map((k, i) =>
      staged[i] ?? this.#inFlightEntry<T>(k) ?? this.#believedEntry<T>(k) ??
        this.#fetchedEntry<T>(k)
    );
    const missing: number[] = [];
    out.forEach((e, i) => {
      if (!e) missing.push(i);
    });
    for (let i = 0; i < missing.length; i += KV_LIMITS.keysPerGetMany) {
      const idx = missing.slice(i, i + KV_LIMITS.keysPerGetMany);
      const part = await this.kv.getMany<T[]>(idx.map((j) => keyList[j]));
      part.forEach((e, j) => (out[idx[j]] = e as Deno.KvEntryMaybe<T>));
    }
    out.forEach((e, i) => {
      if (!staged[i]) this.#record(e!);
    });
    return out as Deno.KvEntryMaybe<T>[];
  }

  /**
   * Reads a key without making the commit depend on it. On a first attempt given a
   * `seed`, a seeded entry answers (read moments before, and unchecked either way).
   */
  peek<T>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    const staged = this.#staged<T>(key) ?? this.#inFlightEntry<T>(key);
    if (staged) return Promise.resolve(staged);
    const id = Tx.#id(key);
    const seeded = (this.#believe ? this.#believed?.get(id) : undefined) ??
      this.#fetchedEntry<T>(key);
    if (seeded) return Promise.resolve(seeded as Deno.KvEntryMaybe<T>);
    return this.kv.get<T>(key);
  }

  /** Adds a check for an entry read elsewhere. */
  check(entry: Deno.AtomicCheck): this {
    this.#record(entry as Deno.KvEntryMaybe<unknown>);
    return this;
  }

  #push(m: Mutation): void {
    this.#mutations.push(m);
    this.#stage(m.id, m.type === "set" ? m.value : undefined, m.type === "sum");
    const k = keySize(m.key);
    this.#keyBytes += k;
    if (k > this.#maxKey) this.#maxKey = k;
    if (m.type === "set") {
      const v = valueSize(m.value);
      this.#bytes += v;
      if (v > this.#maxValue) this.#maxValue = v;
    }
    const guard = guardOf(m.key);
    if (guard && !this.#written.has(Tx.#id(guard))) this.set(guard, 1);
  }

  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }): this {
    this.#push({ type: "set", id: Tx.#id(key), key, value, expireIn: options?.expireIn });
    return this;
  }

  delete(key: Deno.KvKey): this {
    this.#push({ type: "delete", id: Tx.#id(key), key });
    return this;
  }

  /** Adds to a KvU64 counter (no check needed: sums commute). */
  sum(key: Deno.KvKey, value: bigint): this {
    this.#push({ type: "sum", id: Tx.#id(key), key, value });
    return this;
  }

  /**
   * Collects a number under `prefix`. At the commit, the numbers collected under one prefix
   * (by every member of a group) are stored as sorted arrays at `[...prefix, first]`, each
   * holding numbers from its first up to `first + span` (exclusive): one row for many. The
   * caller makes sure no stored key of that shape is also written otherwise in the commit
   * (new numbers only: domain/search_index.ts).
   */
  collect(prefix: Deno.KvKey, item: number, span: number): this {
    const id = Tx.#id(prefix);
    let entry = this.#collected.get(id);
    if (!entry) {
      const added = { prefix, span, items: [] as number[] };
      this.#collected.set(id, entry = added);
      this.#keyBytes += keySize([...prefix, item]);
      this.#log(false, () => {
        if (added.items.length === 0) this.#collected.delete(id);
      });
    }
    const items = entry.items;
    items.push(item);
    this.#bytes += 9;
    this.#log(false, () => items.pop()); // (`rollback` restores the byte counts itself)
    return this;
  }

  /** The blocks the collected numbers make (`collect`). */
  #blocks(): Mutation[] {
    const out: Mutation[] = [];
    for (const { prefix, span, items } of this.#collected.values()) {
      const sorted = [...items].sort((a, b) => a - b);
      let i = 0;
      while (i < sorted.length) {
        const first = sorted[i];
        let j = i;
        while (j < sorted.length && sorted[j] < first + span) j++;
        const key = [...prefix, first];
        out.push({ type: "set", id: Tx.#id(key), key, value: sorted.slice(i, j) });
        i = j;
      }
    }
    return out;
  }

  /** The value this transaction has already set for a key, if any. */
  pending<T>(key: Deno.KvKey): T | undefined {
    return this.own<T>(key)?.value ?? undefined;
  }

  /** This transaction's own staged write of `key`: its value (null when deleted), or undefined. */
  own<T>(key: Deno.KvKey): { value: T | null } | undefined {
    const id = Tx.#id(key);
    if (!this.#written.has(id)) return undefined;
    return { value: (this.#written.get(id) ?? null) as T | null };
  }

  get mutationCount(): number {
    return this.#mutations.length;
  }

  /** Where the staged state stands now (a group commit rolls a refused member back to it). */
  savepoint(): Savepoint {
    this.#member++;
    return {
      mutations: this.#mutations.length,
      undo: this.#undo.length,
      keyBytes: this.#keyBytes,
      bytes: this.#bytes,
      maxValue: this.#maxValue,
    };
  }

  /**
   * Drops what was staged since `sp`. With `keepReads`, what was read since stays checked:
   * a refusal stays valid only if what it was decided on is still current at the commit.
   */
  rollback(sp: Savepoint, keepReads = false): void {
    this.#mutations.length = sp.mutations;
    this.#bytes = sp.bytes;
    this.#maxValue = sp.maxValue;
    const since = this.#undo.splice(sp.undo);
    const kept: Undo[] = [];
    for (let i = since.length - 1; i >= 0; i--) {
      if (keepReads && since[i].read) kept.push(since[i]);
      else since[i].undo();
    }
    // Key bytes of dropped mutations stay counted when reads are kept: an upper bound.
    if (keepReads) this.#undo.push(...kept.reverse());
    else this.#keyBytes = sp.keyBytes;
  }

  /** How many blocks the collected numbers make, at most (one per prefix unless spread wide). */
  #blockCount(): number {
    let n = 0;
    for (const { span, items } of this.#collected.values()) {
      if (items.length === 0) continue;
      let lo = Infinity;
      let hi = -Infinity;
      for (const x of items) {
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      n += hi - lo < span ? 1 : Math.min(items.length, Math.ceil((hi - lo + 1) / span) + 1);
    }
    return n;
  }

  /** True when the staged atomic (with the bumps the commit adds) breaks a portable limit. */
  get overLimits(): boolean {
    return this.#checks.size > KV_LIMITS.checksPerAtomic ||
      this.#mutations.length + this.#blockCount() + 2 > KV_LIMITS.mutationsPerAtomic ||
      this.#keyBytes + 200 > KV_LIMITS.keyBytesPerAtomic ||
      this.#bytes + this.#keyBytes + 200 > KV_LIMITS.bytesPerAtomic;
  }

  /**
   * The mutations to commit: the last set or delete of a key wins, sums of one key are
   * added up (a group's members often count the same search term).
   */
  #merged(): Mutation[] {
    const byId = new Map<string, Mutation[]>();
    for (const m of this.#mutations) {
      const list = byId.get(m.id);
      if (list) list.push(m);
      else byId.set(m.id, [m]);
    }
    const out: Mutation[] = [];
    for (const list of byId.values()) {
      if (list.length === 1) out.push(list[0]);
      else if (list.every((m) => m.type === "sum")) {
        const total = list.reduce((a, m) => a + (m as { value: bigint }).value, 0n) &
          0xffff_ffff_ffff_ffffn;
        out.push({ type: "sum", id: list[0].id, key: list[0].key, value: total });
      } else if (list.every((m) => m.type !== "sum")) out.push(list[list.length - 1]);
      else out.push(...list);
    }
    for (const block of this.#blocks()) {
      if (byId.has(block.id)) throw new Error(`collected block ${block.id} is also written`);
      out.push(block);
    }
    return out;
  }

  /**
   * Builds the atomic, asserting the portable limits — counting the read-cache version
   * keys a versioned handle adds to it (kv/versioned_kv.ts). `inFlightVersionstamp`: the
   * versionstamp of the commit this one was prepared beside, for what was read of it.
   */
  build(inFlightVersionstamp?: string): Deno.AtomicOperation {
    const checks = [...this.#checks.values()].map((c) => {
      if (c.versionstamp !== IN_FLIGHT) return c;
      if (!inFlightVersionstamp) {
        throw new Error("a read of a commit in flight needs its versionstamp");
      }
      return { key: c.key, versionstamp: inFlightVersionstamp };
    });
    const mutations = this.#merged();
    const bumps = readVersionBumps(mutations.map((m) => m.key));
    // The sizes were added up as the mutations were staged (valueSize serialises a value:
    // doing it once is enough).
    if (checks.length > KV_LIMITS.checksPerAtomic) {
      throw new AtomicLimitError(
        `atomic has ${checks.length} checks (max ${KV_LIMITS.checksPerAtomic})`,
      );
    }
    if (mutations.length + bumps.length > KV_LIMITS.mutationsPerAtomic) {
      throw new AtomicLimitError(`atomic has ${mutations.length + bumps.length} mutations`);
    }
    if (this.#maxKey > KV_LIMITS.keyBytes) {
      throw new AtomicLimitError(`key of ${this.#maxKey} bytes`);
    }
    if (this.#maxValue > KV_LIMITS.valueBytes) {
      throw new AtomicLimitError(`value of ${this.#maxValue} bytes`);
    }
    const keyBytes = this.#keyBytes + bumps.reduce((a, k) => a + keySize(k), 0);
    if (keyBytes > KV_LIMITS.keyBytesPerAtomic) throw new AtomicLimitError(`${keyBytes} key bytes`);
    if (this.#bytes + keyBytes > KV_LIMITS.bytesPerAtomic) {
      throw new AtomicLimitError(`${this.#bytes} bytes`);
    }
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

  get isEmpty(): boolean {
    return this.#mutations.length === 0 && this.#collected.size === 0;
  }

  /**
   * After a successful commit: remembers every entry it both read and wrote, as the commit
   * left it. After a failed one: forgets everything (a guard's covered entries are exact
   * only while nothing failed since they were remembered, kv/guards.ts).
   */
  settleMemory(versionstamp: string | null): void {
    const memory = this.#memory;
    if (!memory) return;
    if (versionstamp === null) {
      memory.forgetAll();
      return;
    }
    const seen = new Set<string>();
    for (let i = this.#mutations.length - 1; i >= 0; i--) {
      const m = this.#mutations[i];
      const id = m.id;
      if (seen.has(id)) continue;
      seen.add(id);
      // Only what this commit both read and wrote is known exactly; anything else it wrote
      // is no longer what memory may hold.
      if (!this.#readIds.has(id) || this.#summed.has(id) || !this.#keep(m.key)) memory.forget(id);
      else if (m.type === "set") memory.remember(id, { key: m.key, value: m.value, versionstamp });
      else memory.remember(id, { key: m.key, value: null, versionstamp: null });
    }
  }
}

const locks = new Map<string, Promise<void>>();
/** How many callers of `withLocalLock` wait for each name. */
const lockWaiters = new Map<string, number>();

/** True when someone waits for the in-process lock `name` (its holder should let go soon). */
function othersWaitFor(name: string): boolean {
  return (lockWaiters.get(name) ?? 0) > 0;
}

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
  lockWaiters.set(name, (lockWaiters.get(name) ?? 0) + 1);
  try {
    await prev;
  } finally {
    lockWaiters.set(name, lockWaiters.get(name)! - 1);
  }
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
  /**
   * With `lock`: group commit. Transactions that wait for the lock while a commit is in
   * flight run one after another against one shared Tx (each sees what the earlier ones
   * staged) and commit in one atomic, as many as fit the portable limits. Each keeps its
   * own result: one that throws is rolled back alone (its reads stay checked, so its
   * refusal holds only if the commit confirms what it saw). While a group's commit is in
   * flight, the next group runs on what it writes and commits after it (`runGroups`). For
   * hot write paths whose commits would otherwise queue one by one (docs/benchmark_notes.md).
   */
  group?: boolean;
  /** With `group`: keys the function will read, read for the whole group in one batch. */
  prefetch?: Deno.KvKey[];
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
  if (options.group && options.lock) return await groupTransact(kv, fn, options);
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
 * Reads, in parallel batches of ten, the keys of `keyList` no remembered entry answers
 * (nor `skip`, the seeded keys, for keys no guard covers). A covered key is read only while its guard is remembered: read after the
 * guard's version, it is exact as long as the guard's check passes (kv/guards.ts).
 */
async function readAhead(
  kv: Deno.Kv,
  memory: EntryMemory | null | undefined,
  keyList: Deno.KvKey[],
  skip: Set<string>,
): Promise<Map<string, Deno.KvEntryMaybe<unknown>>> {
  const wanted = new Map<string, Deno.KvKey>();
  for (const key of keyList) {
    const id = Tx.idOf(key);
    const guard = guardOf(key);
    // A seed answers only keys no guard covers (`#believedEntry`).
    if (wanted.has(id) || (!guard && skip.has(id)) || memory?.has(id)) continue;
    if (guard && !memory?.has(Tx.idOf(guard))) continue; // no guard remembered to read after
    wanted.set(id, key);
  }
  const out = new Map<string, Deno.KvEntryMaybe<unknown>>();
  for (const e of await readMany(kv, [...wanted.values()])) out.set(Tx.idOf(e.key), e);
  return out;
}

/** One transaction waiting for its group's commit. */
interface Member {
  fn: (tx: Tx) => Promise<unknown>;
  seed?: Deno.KvEntryMaybe<unknown>[];
  prefetch?: Deno.KvKey[];
  /** Its keys, read as it arrived while a commit was under way, and the commits made then. */
  ahead?: { after: number; entries: Promise<Map<string, Deno.KvEntryMaybe<unknown>>> };
  /** Failed group commits it was part of. */
  attempts: number;
  resolve: (r: { value: unknown; versionstamp: string | null }) => void;
  reject: (e: unknown) => void;
}

/** The members waiting per KV handle and lock name, and whether a committer is running. */
interface GroupQueue {
  waiting: Member[];
  running: boolean;
  /** Group commits made so far under this lock (numbers the entries of `written`). */
  commits: number;
  /** What the latest commits wrote: `[commit number, ids]`, newest last (bounded). */
  written: [number, Set<string>][];
  /** Wakes the group being prepared beside a commit in flight when a member arrives. */
  arrived: (() => void) | null;
}

/** A group run against one shared Tx: its members' outcomes, and those left for later. */
interface Group {
  tx: Tx;
  included: { member: Member; ok: boolean; value: unknown }[];
  /** Members that did not fit, or read what the commit in flight leaves unknown. */
  left: Member[];
  /** Prepared while another group's commit was in flight (and read what it writes). */
  beside: boolean;
}

/** A group whose commit is in flight. */
interface Flight {
  group: Group;
  /** What the commit writes, for the group prepared meanwhile. */
  writes: InFlightWrites;
  landed: boolean;
  outcome: Promise<{ res: Deno.KvCommitResult | Deno.KvCommitError } | { error: unknown }>;
}

/** How many commits' writes are kept for members that read ahead. */
const WRITTEN_KEPT = 64;

const groupQueues = new WeakMap<Deno.Kv, Map<string, GroupQueue>>();

/** Most transactions in one group (a bound on the latency a member can add to another). */
const MAX_GROUP = 32;

function groupQueue(kv: Deno.Kv, lock: string): GroupQueue {
  let byLock = groupQueues.get(kv);
  if (!byLock) groupQueues.set(kv, byLock = new Map());
  let q = byLock.get(lock);
  if (!q) {
    byLock.set(lock, q = { waiting: [], running: false, commits: 0, written: [], arrived: null });
  }
  return q;
}

function groupTransact<T>(
  kv: Deno.Kv,
  fn: (tx: Tx) => Promise<T>,
  options: TransactOptions,
): Promise<{ value: T; versionstamp: string | null }> {
  const lock = options.lock!;
  const q = groupQueue(kv, lock);
  // Arriving while a group is under way: read this member's keys now, in parallel with it,
  // so that its own group does not wait for them (what commits write meanwhile is dropped).
  let ahead: Member["ahead"];
  if (q.running && options.prefetch && options.remember) {
    const seeded = new Set((options.seed ?? []).map((e) => Tx.idOf(e.key)));
    const entries = readAhead(kv, entryMemory(kv, lock), options.prefetch, seeded)
      .catch(() => new Map<string, Deno.KvEntryMaybe<unknown>>()); // only means reading later
    ahead = { after: q.commits, entries };
  }
  const done = new Promise<{ value: T; versionstamp: string | null }>((resolve, reject) => {
    q.waiting.push({
      fn,
      seed: options.seed,
      prefetch: options.prefetch,
      ahead,
      attempts: 0,
      resolve: resolve as Member["resolve"],
      reject,
    });
  });
  q.arrived?.();
  if (!q.running) {
    q.running = true;
    (async () => {
      try {
        while (q.waiting.length) {
          await withLocalLock(lock, () => runGroups(kv, q, options));
        }
      } catch (e) {
        for (const m of q.waiting.splice(0)) m.reject(e); // not expected: runGroups settles its own
      } finally {
        q.running = false;
      }
    })();
  }
  return done;
}

/**
 * The ids every group commit after the `after`-th wrote, or null when they are no longer
 * all known (then what was read ahead is not used).
 */
function writtenSince(q: GroupQueue, after: number): Set<string> | null {
  if (after < q.commits - q.written.length) return null;
  const out = new Set<string>();
  for (const [n, ids] of q.written) if (n > after) { for (const id of ids) out.add(id); }
  return out;
}

/**
 * Commits groups until none is waiting (or another holder of the lock waits for it). While
 * one group's commit is in flight, the next group is prepared beside it: its members read
 * what that commit writes as if it had landed, checked against its versionstamp once known,
 * and members keep joining it until the commit lands. If the commit fails, the group
 * prepared beside it runs again. Each member settles once, with its group's commit.
 */
async function runGroups(kv: Deno.Kv, q: GroupQueue, options: TransactOptions): Promise<void> {
  const memory = options.remember ? entryMemory(kv, options.lock!) : undefined;
  const attempts = options.attempts ?? 60;
  const requeue = (members: Member[]) => q.waiting.unshift(...members);
  let flight: Flight | null = null;
  let landedAt: string | undefined;
  // After a failed commit or a belief found stale, the next group is the members sent round
  // again, alone, reading everything afresh: the shorter its run, the less can change under it.
  let fresh = 0;
  while (q.waiting.length || flight) {
    let group: Group | null = null;
    // Beside a commit in flight, members that arrive until it lands join the next group.
    if (flight ? flight.writes.anchored && !othersWaitFor(options.lock!) : q.waiting.length) {
      group = await prepareGroup(kv, q, options, memory, fresh ? null : flight, fresh);
      fresh = 0;
      if (!group.included.length && !group.left.length) group = null;
    }
    if (flight) {
      const landing = await land(q, flight, memory);
      flight = null;
      if (group && (!landing.ok || group.tx.isEmpty)) {
        // Prepared on writes that did not land, or a refusal decided beside a commit: again.
        requeue([...group.included.map((m) => m.member), ...group.left]);
        group = null;
      }
      if (!landing.ok) {
        const retry: Member[] = [];
        for (const m of landing.failed) {
          if (++m.attempts >= attempts) {
            m.reject(new TxConflictError("transaction kept conflicting"));
          } else retry.push(m);
        }
        requeue(retry);
        fresh = retry.length;
        if (landing.backOff) {
          const n = Math.max(0, ...retry.map((m) => m.attempts));
          await new Promise((r) =>
            setTimeout(r, Math.min(50, 1 + Math.random() * 2 ** Math.min(n, 5)))
          );
        }
        continue;
      }
      landedAt = landing.versionstamp;
      if (othersWaitFor(options.lock!) && !group) return; // let them in; this runner queues again
    }
    if (!group) continue;
    requeue(group.left);
    if (group.tx.isEmpty) {
      if (group.tx.usedBelieved) {
        // Refusals and answers that write nothing, decided on believed entries, are decided
        // again on fresh reads (as in `transact`): the memory is no longer believed.
        memory?.forgetAll();
        const again = [...group.included.map((m) => m.member), ...group.left];
        for (const m of again) m.seed = undefined;
        q.waiting.splice(0, group.left.length); // requeued above: once, in order
        requeue(again);
        fresh = again.length;
        continue;
      }
      for (const m of group.included) {
        if (m.ok) m.member.resolve({ value: m.value, versionstamp: null });
        else m.member.reject(m.value);
      }
      continue;
    }
    flight = launch(group, group.beside ? landedAt : undefined);
  }
}

/** Starts a group's commit. A group that cannot be built (a programming error) is refused. */
function launch(group: Group, besideVersionstamp: string | undefined): Flight | null {
  let op: Deno.AtomicOperation;
  try {
    op = group.tx.build(besideVersionstamp);
  } catch (e) {
    for (const m of group.included) m.member.reject(e);
    return null;
  }
  // The commit first: what it leaves for the next group is worked out while the store writes.
  const committing = op.commit();
  const flight: Flight = {
    group,
    writes: group.tx.inFlight(),
    landed: false,
    outcome: committing.then((res) => ({ res }), (error) => ({ error })),
  };
  flight.outcome.then(() => (flight.landed = true));
  return flight;
}

/**
 * Waits for a group's commit and settles it: on success its members get their results; on
 * a failed check (or a locked store) the members are handed back to be run again.
 */
async function land(
  q: GroupQueue,
  flight: Flight,
  memory: EntryMemory | undefined,
): Promise<
  { ok: true; versionstamp: string } | { ok: false; failed: Member[]; backOff: boolean }
> {
  const { group } = flight;
  const outcome = await flight.outcome;
  if ("error" in outcome) {
    memory?.forgetAll();
    if (!isLockedError(outcome.error)) {
      for (const m of group.included) m.member.reject(outcome.error);
      return { ok: false, failed: [], backOff: false };
    }
  }
  const res = "res" in outcome ? outcome.res : { ok: false as const };
  group.tx.settleMemory(res.ok ? res.versionstamp : null);
  if (!res.ok) {
    for (const m of group.included) m.member.seed = undefined; // read afresh next time
    return {
      ok: false,
      failed: group.included.map((m) => m.member),
      backOff: !group.tx.usedBelieved,
    };
  }
  q.written.push([++q.commits, group.tx.writtenIds]);
  if (q.written.length > WRITTEN_KEPT) q.written.shift();
  for (const m of group.included) {
    if (m.ok) m.member.resolve({ value: m.value, versionstamp: res.versionstamp });
    else m.member.reject(m.value);
  }
  return { ok: true, versionstamp: res.versionstamp };
}

/**
 * Runs waiting members one after another against one shared Tx, as many as fit the portable
 * limits. Beside a commit in flight, members read what it writes and keep joining until it
 * lands; otherwise the group is those waiting now.
 */
async function prepareGroup(
  kv: Deno.Kv,
  q: GroupQueue,
  options: TransactOptions,
  memory: EntryMemory | undefined,
  flight: Flight | null,
  fresh: number,
): Promise<Group> {
  const tx = new Tx(kv, {
    memory,
    believe: !fresh,
    keep: typeof options.remember === "function" ? options.remember : undefined,
    overlay: true,
    inFlight: flight?.writes,
  });
  const group: Group = { tx, included: [], left: [], beside: !!flight };
  let taken = 0;
  const most = fresh || MAX_GROUP;
  while (taken < most && !group.left.length) {
    if (!q.waiting.length) {
      if (!flight || flight.landed) break;
      await new Promise<void>((wake) => {
        q.arrived = wake;
        flight.outcome.then(() => wake());
      });
      q.arrived = null;
      continue;
    }
    const batch = q.waiting.splice(0, most - taken);
    taken += batch.length;
    for (const m of batch) tx.addSeed(m.seed);
    for (const m of batch) {
      if (!m.ahead) continue;
      const since = writtenSince(q, m.ahead.after);
      if (since) tx.adoptFetched(await m.ahead.entries, since);
      m.ahead = undefined;
    }
    await tx.prefetch(batch.flatMap((m) => m.prefetch ?? [])).catch(() => {}); // read later
    for (const member of batch) {
      if (group.left.length) {
        group.left.push(member);
        continue;
      }
      const sp = tx.savepoint();
      try {
        const value = await member.fn(tx);
        if (tx.overLimits && group.included.length) {
          tx.rollback(sp);
          group.left.push(member);
        } else group.included.push({ member, ok: true, value });
      } catch (e) {
        if (e instanceof GroupReadConflict && (group.included.length || flight)) {
          tx.rollback(sp);
          group.left.push(member);
          continue;
        }
        tx.rollback(sp, true);
        if (tx.overLimits && group.included.length) {
          tx.rollback(sp);
          group.left.push(member);
        } else group.included.push({ member, ok: false, value: e });
      }
    }
    if (!flight || flight.landed) break;
  }
  return group;
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
