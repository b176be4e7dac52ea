/**
 * What a process remembers of the entries its own commits wrote under one in-process lock
 * (`transact(..., { lock, remember: true })`, kv/tx.ts): a hot key such as a board head,
 * a counter or a rate window costs no read while this process is its only writer. Every
 * remembered entry is still checked by the commit that relies on it, so a write from
 * elsewhere only costs that commit a retry with fresh reads. Bounded (least recently used
 * entries go first).
 */

const MAX_ENTRIES = 16_384;

/** A private copy of a value (KV values are plain data; KvU64 and primitives are immutable). */
export function copyValue(v: unknown): unknown {
  return v === null || typeof v !== "object" || v instanceof Deno.KvU64 ? v : structuredClone(v);
}

export class EntryMemory {
  #entries = new Map<string, Deno.KvEntryMaybe<unknown>>();

  /** The remembered entry (its value copied, so callers may not alter what is kept). */
  get(id: string): Deno.KvEntryMaybe<unknown> | undefined {
    const e = this.#entries.get(id);
    if (!e) return undefined;
    this.#entries.delete(id);
    this.#entries.set(id, e);
    return {
      key: e.key,
      value: copyValue(e.value),
      versionstamp: e.versionstamp,
    } as Deno.KvEntryMaybe<
      unknown
    >;
  }

  remember(id: string, entry: Deno.KvEntryMaybe<unknown>): void {
    this.#entries.delete(id);
    this.#entries.set(
      id,
      { ...entry, value: copyValue(entry.value) } as Deno.KvEntryMaybe<unknown>,
    );
    if (this.#entries.size > MAX_ENTRIES) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  /** True when an entry is remembered (without touching its recency). */
  has(id: string): boolean {
    return this.#entries.has(id);
  }

  forget(id: string): void {
    this.#entries.delete(id);
  }

  forgetAll(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}

const memories = new WeakMap<Deno.Kv, Map<string, EntryMemory>>();

/** The memory of one lock name on one KV handle. */
export function entryMemory(kv: Deno.Kv, lock: string): EntryMemory {
  let byLock = memories.get(kv);
  if (!byLock) memories.set(kv, byLock = new Map());
  let m = byLock.get(lock);
  if (!m) byLock.set(lock, m = new EntryMemory());
  return m;
}
