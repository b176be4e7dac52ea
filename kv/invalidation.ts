/**
 * What a write under each key makes stale, declared with the key's builder in kv/keys.ts.
 * The read caches (domain/read_cache.ts) keep whole answers of feed and activity pages,
 * thread reads and searches; a commit that writes a key such an answer can show bumps the
 * shared read version in the same atomic (kv/read_versions.ts), which empties them on
 * every instance. A key that is one account's own state also marks that account's own
 * write, so the account's next read sees it even on a snapshot of versions read earlier.
 */

/** What a write under one key invalidates. */
export interface Invalidation {
  /** True when a cached read can show what the key holds (a function decides per key). */
  readonly readCaches: boolean | ((key: Deno.KvKey) => boolean);
  /** Position of the account id whose own state the key is (or a function finding it). */
  readonly owner?: number | ((key: Deno.KvKey) => string | null);
}

/** A range builder for listing keys whose writes are declared by the builder of the keys. */
export const LISTING = "listing";

/** The declaration a key builder carries: its invalidation, or `LISTING` for a range. */
export type Declaration = Invalidation | typeof LISTING;

// deno-lint-ignore no-explicit-any
type Builder = (...args: any[]) => readonly unknown[];

/** A key builder with its declaration. */
type Declared<F extends Builder> = F & { readonly invalidates: Declaration };

const byPrefix = new Map<string, Invalidation>();

/** The first part of the keys `build` makes (called with placeholder arguments). */
export function prefixOf(build: Builder): string {
  return String(build(...new Array(build.length).fill("_"))[0]);
}

/** Declares what writes of the keys `build` makes invalidate. One declaration per prefix. */
export function declare<F extends Builder>(invalidates: Invalidation, build: F): Declared<F> {
  const prefix = prefixOf(build);
  if (byPrefix.has(prefix)) throw new Error(`key prefix ${prefix} is declared twice`);
  byPrefix.set(prefix, invalidates);
  return Object.assign(build, { invalidates });
}

/** A key whose contents cached reads show: writing it bumps the read version. */
export const shown = <F extends Builder>(build: F) => declare({ readCaches: true }, build);

/** A key no cached read shows: writing it bumps nothing. */
export const unshown = <F extends Builder>(build: F) => declare({ readCaches: false }, build);

/** One account's own state (its id at `owner` in the key), shown by cached reads. */
export const ownShown = <F extends Builder>(owner: number, build: F) =>
  declare({ readCaches: true, owner }, build);

/** A range of keys declared by another builder (for `list`; never written itself). */
export function listing<F extends Builder>(build: F): Declared<F> {
  return Object.assign(build, { invalidates: LISTING as Declaration });
}

/** A key nobody declared (written by hand, or by an older deployment): shown, to be safe. */
const UNDECLARED: Invalidation = { readCaches: true };

/** The declaration that governs a write of `key`. */
export function invalidationOf(key: Deno.KvKey): Invalidation {
  return byPrefix.get(String(key[0])) ?? UNDECLARED;
}

/** Every declared prefix with its declaration (for tests and docs). */
export function declaredPrefixes(): ReadonlyMap<string, Invalidation> {
  return byPrefix;
}
