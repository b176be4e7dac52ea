/**
 * Key builders, and what a write under each key makes stale, declared with the builder in
 * kv/keys.ts. The read caches (domain/read_cache.ts) keep whole answers of feed and activity
 * pages, thread reads and searches; a commit that writes a key such an answer can show bumps
 * the shared read-version key in the same atomic (kv/versioned_kv.ts), which empties them on
 * every instance. A key that is one account's own state names that account (`owner`), so the
 * account's next read sees its write even on versions read earlier (domain/own_writes.ts).
 */
import type { Typed } from "./key_values.ts";

/** What a write under one key invalidates. */
interface Invalidation {
  /** True when a cached read can show what the key holds (a function decides per key). */
  readonly readCaches: boolean | ((key: Deno.KvKey) => boolean);
  /** Position of the account id whose own state the key is (or a function finding it). */
  readonly owner?: number | ((key: Deno.KvKey) => string | null);
}

/** The leading arguments of a builder: a range of keys fixes some of them. */
type Leading<A extends unknown[]> = A extends [...infer H, unknown] ? A | Leading<H> : A;

/** A key builder: its keys are `prefix` followed by the arguments, holding values of type `V`. */
export interface KeyBuilder<A extends Deno.KvKeyPart[], V = unknown> {
  (...args: A): readonly [string, ...A] & Typed<V>;
  /**
   * The prefix of the keys (for `list`) whose first arguments are `args`, typed with the value
   * of the keys under it (`listTyped` in kv/read_many.ts lists entries of that type).
   */
  range(...args: Leading<A>): Deno.KvKey & Typed<V>;
  readonly prefix: string;
  readonly invalidates: Invalidation;
}

const byPrefix = new Map<string, Invalidation>();

/** Declares what writes of the keys under `prefix` invalidate. One declaration per prefix. */
export function declare<A extends Deno.KvKeyPart[] = []>(
  prefix: string,
  invalidates: Invalidation,
): KeyBuilder<A> {
  if (byPrefix.has(prefix)) throw new Error(`key prefix ${prefix} is declared twice`);
  byPrefix.set(prefix, invalidates);
  const range = (...args: Leading<A>): Deno.KvKey => [prefix, ...args];
  return Object.assign((...args: A) => [prefix, ...args] as const, { range, prefix, invalidates });
}

/**
 * The one key `[family prefix, name]` of a family of single entries that share a prefix and its
 * declaration (the `meta` entries): a builder of its own, so each entry declares its own value.
 */
export function entryOf(family: KeyBuilder<[name: string]>, name: string): KeyBuilder<[]> {
  const key = () => family(name);
  const entry = { range: key, prefix: family.prefix, invalidates: family.invalidates };
  // Typed as a builder without arguments: its key has the name after the prefix.
  return Object.assign(key, entry) as unknown as KeyBuilder<[]>;
}

/** A key whose contents cached reads show: writing it bumps the read version. */
export const shown = <A extends Deno.KvKeyPart[] = []>(prefix: string) =>
  declare<A>(prefix, { readCaches: true });

/** A key no cached read shows: writing it bumps nothing. */
export const unshown = <A extends Deno.KvKeyPart[] = []>(prefix: string) =>
  declare<A>(prefix, { readCaches: false });

/** One account's own state (its id at `owner` in the key), shown by cached reads. */
export const ownShown = <A extends Deno.KvKeyPart[] = []>(prefix: string, owner: number) =>
  declare<A>(prefix, { readCaches: true, owner });

/** The declaration that governs a write of `key`; a key nobody declared counts as shown. */
export function invalidationOf(key: Deno.KvKey): Invalidation {
  return byPrefix.get(String(key[0])) ?? { readCaches: true };
}

/** True when a write of `key` can change what a cached read shows (its declaration). */
export function bumpsReadVersion(key: Deno.KvKey): boolean {
  const { readCaches } = invalidationOf(key);
  return typeof readCaches === "function" ? readCaches(key) : readCaches;
}
