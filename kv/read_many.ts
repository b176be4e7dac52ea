/** Reading any number of keys in one round trip's time (kv/atomic_limits.ts caps a getMany). */
import type { EntriesOf, NamedEntry, NamedRead, ValueOf } from "./key_values.ts";
import { KV_LIMITS } from "./atomic_limits.ts";

/**
 * Reads `keyList` in getMany batches of the most one takes, all batches at once, in order;
 * each entry has its key's value type (a tuple of keys gives a tuple of entries).
 */
export function readMany<const Ks extends readonly Deno.KvKey[]>(
  kv: Deno.Kv,
  keyList: Ks,
  options?: { consistency?: Deno.KvConsistencyLevel },
): Promise<EntriesOf<Ks>>;
export async function readMany(
  kv: Deno.Kv,
  keyList: readonly Deno.KvKey[],
  options?: { consistency?: Deno.KvConsistencyLevel },
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const parts: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
  for (let i = 0; i < keyList.length; i += KV_LIMITS.keysPerGetMany) {
    const part: readonly Deno.KvKey[] = keyList.slice(i, i + KV_LIMITS.keysPerGetMany);
    parts.push(options ? kv.getMany(part, options) : kv.getMany(part));
  }
  return (await Promise.all(parts)).flat();
}

/** The entries of a named read, in the order `flattenNamed` listed their keys. */
type NamedEntries<R> = { -readonly [N in keyof R]: NamedEntry<R[N]> };

const isList = (x: NamedRead): x is readonly Deno.KvKey[] =>
  x !== null && (x.length === 0 || Array.isArray(x[0]));

/** The keys of a named read, in one list (names given null read nothing). */
export function flattenNamed(named: Record<string, NamedRead>): Deno.KvKey[] {
  const flat: Deno.KvKey[] = [];
  for (const x of Object.values(named)) {
    if (x === null) continue;
    if (isList(x)) flat.push(...x);
    else flat.push(x as Deno.KvKey);
  }
  return flat;
}

/** The entries read for `flattenNamed(named)`, back under their names. */
export function unflattenNamed<R extends Record<string, NamedRead>>(
  named: R,
  entries: readonly Deno.KvEntryMaybe<unknown>[],
): NamedEntries<R> {
  const out: Record<string, unknown> = {};
  let i = 0;
  for (const [name, x] of Object.entries(named)) {
    if (x === null) out[name] = null;
    else if (isList(x)) out[name] = entries.slice(i, i += x.length);
    else out[name] = entries[i++];
  }
  return out as NamedEntries<R>;
}

/**
 * Reads named keys (a key, a list of keys, or null under each name) as `readMany` does, and
 * answers the entries under the same names, each with its key's value type.
 */
export async function readNamed<const R extends Record<string, NamedRead>>(
  kv: Deno.Kv,
  named: R,
): Promise<NamedEntries<R>> {
  return unflattenNamed(named, await readMany(kv, flattenNamed(named)));
}

/**
 * A list selector whose typed key carries the value type: a builder's `range` prefix, or in
 * the start/end form (no prefix) the start key, made by the same builder as the end key.
 */
export type TypedListSelector<P extends Deno.KvKey> =
  | { prefix: P }
  | { prefix: P; start: Deno.KvKey }
  | { prefix: P; end: Deno.KvKey }
  | { start: P; end: Deno.KvKey };

/**
 * `kv.list` under a builder's `range(...)` (or from one of its keys to another): each entry has
 * the value type the builder declares (kv/key_values.ts), so a listing needs no type argument.
 */
export function listTyped<P extends Deno.KvKey>(
  kv: Deno.Kv,
  selector: TypedListSelector<P>,
  options?: Deno.KvListOptions,
): Deno.KvListIterator<ValueOf<P>> {
  return kv.list<ValueOf<P>>(selector, options);
}
