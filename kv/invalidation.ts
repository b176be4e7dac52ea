/**
 * Key builders, and what a write under each key makes stale, declared with the builder in
 * kv/keys.ts. The read caches (domain/read_cache.ts) keep whole answers of feed and activity
 * pages, thread reads and searches; a commit that writes a key such an answer can show bumps
 * the shared read-version key in the same atomic (kv/versioned_kv.ts), which empties them on
 * every instance. A key that is one account's own state names that account (`owner`), so the
 * account's next read sees its write even on versions read earlier (domain/own_writes.ts).
 */

/** What a write under one key invalidates. */
export interface Invalidation {
  /** True when a cached read can show what the key holds (a function decides per key). */
  readonly readCaches: boolean | ((key: Deno.KvKey) => boolean);
  /** Position of the account id whose own state the key is (or a function finding it). */
  readonly owner?: number | ((key: Deno.KvKey) => string | null);
}

/**
 * A key builder: its keys are `prefix` followed by the arguments. `invalidates` is null for
 * a range builder (for `list`) whose keys another builder declares.
 */
export interface KeyBuilder<A extends Deno.KvKeyPart[]> {
  (...args: A): readonly [string, ...A];
  readonly prefix: string;
  readonly invalidates: Invalidation | null;
}

const byPrefix = new Map<string, Invalidation>();

function builder<A extends Deno.KvKeyPart[]>(
  prefix: string,
  invalidates: Invalidation | null,
): KeyBuilder<A> {
  return Object.assign((...args: A) => [prefix, ...args] as const, { prefix, invalidates });
}

/** Declares what writes of the keys under `prefix` invalidate. One declaration per prefix. */
export function declare<A extends Deno.KvKeyPart[] = []>(
  prefix: string,
  invalidates: Invalidation,
): KeyBuilder<A> {
  if (byPrefix.has(prefix)) throw new Error(`key prefix ${prefix} is declared twice`);
  byPrefix.set(prefix, invalidates);
  return builder(prefix, invalidates);
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

/** A range of keys another builder declares (for `list`; never written itself). */
export const listing = <A extends Deno.KvKeyPart[] = []>(prefix: string) =>
  builder<A>(prefix, null);

/** The declaration that governs a write of `key`; a key nobody declared counts as shown. */
export function invalidationOf(key: Deno.KvKey): Invalidation {
  return byPrefix.get(String(key[0])) ?? { readCaches: true };
}

/** True when a write of `key` can change what a cached read shows (its declaration). */
export function bumpsReadVersion(key: Deno.KvKey): boolean {
  const { readCaches } = invalidationOf(key);
  return typeof readCaches === "function" ? readCaches(key) : readCaches;
}

/** Every declared prefix with its declaration (for tests and docs). */
export function declaredPrefixes(): ReadonlyMap<string, Invalidation> {
  return byPrefix;
}
