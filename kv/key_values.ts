/**
 * What each key holds, for the compiler. A key builder of kv/keys.ts makes keys branded with
 * the type of the value stored under them (`TypedKey`), so reads through `Tx`, `readMany` and
 * `Deno.Kv` return that type without casts or type arguments, and writes through `Tx.set` must
 * match it. The value types belong to the areas that own the data, so each area declares the
 * value of its builders in `KeyValues` by module augmentation, next to the type:
 *
 *     declare module "../../kv/key_values.ts" {
 *       interface KeyValues { messages: StoredMessage }
 *     }
 *
 * A builder nobody declares holds `unknown`. Where stores written before hold older shapes, the
 * declared value is the union of the shapes, and the reader narrows it.
 */

/** The brand a key carries in the type system only (nothing is added to the key). */
declare const valueType: unique symbol;

/** A key whose stored value has type `V`. */
export type Typed<V> = { readonly [valueType]?: V };

/**
 * The stored value type of the keys of each builder of kv/keys.ts, by builder name. Plain
 * counters and indexes are declared here; records by the areas that define them.
 */
export interface KeyValues {
  /** The board's first start, in Unix seconds. */
  metaFirstStart: number;
  /** The development secret. */
  metaBoardSecret: string;
  /** Seconds the test clock has been moved forward, for every process on the store. */
  metaClockShift: number;
  /** An import under way: when it started (Unix seconds) and how many entries it writes. */
  metaImportUnfinished: { started_at: number; entries: number };
  /** A name-skeleton version. */
  metaNameIndexVersion: number;
  /** A connection cap. */
  metaConnectionCap: number;
  /** Service-wide counters (posts, agents, votes, mod_audit). */
  counters: number;
  /** Daily usage counters. */
  quotaUsage: number;
  /** A message's sequence by its id. */
  messageSeqById: number;
  /** An agent id by its name. */
  agentIdByName: string;
  /** An agent id by the hash of its API key. */
  agentIdByKeyHash: string;
  /** An agent name by its name skeleton (per skeleton version). */
  agentNamesBySkeleton: string;
  /** A read-version key: always 1, its versionstamp is the version (kv/versioned_kv.ts). */
  readVersions: number;
}

/** The value type a key is branded with (`unknown` for a plain `Deno.KvKey`). */
export type ValueOf<K> = K extends Typed<infer V> ? V : unknown;

/** The value type of the keys of the builder named `N`. */
export type ValueOfBuilder<N> = N extends keyof KeyValues ? KeyValues[N] : unknown;

/** The entries read for a list (or tuple) of keys, each with its key's value type. */
export type EntriesOf<Ks extends readonly Deno.KvKey[]> = {
  -readonly [I in keyof Ks]: Deno.KvEntryMaybe<ValueOf<Ks[I]>>;
};

/** What a named read asks for under one name: a key, a list of keys, or nothing. */
export type NamedRead = Deno.KvKey | readonly Deno.KvKey[] | null;

/** What a named read answers under one name: an entry, a list of entries, or null. */
export type NamedEntry<X> = X extends null ? null
  : X extends readonly Deno.KvKey[] ? EntriesOf<X>
  : Deno.KvEntryMaybe<ValueOf<X>>;

declare global {
  namespace Deno {
    interface Kv {
      /** Reads a key with the value type its builder declares (kv/key_values.ts). */
      get<K extends KvKey>(
        key: K,
        options?: { consistency?: KvConsistencyLevel },
      ): Promise<KvEntryMaybe<ValueOf<K>>>;
      /** Reads keys with the value types their builders declare (kv/key_values.ts). */
      getMany<const Ks extends readonly KvKey[]>(
        keys: Ks,
        options?: { consistency?: KvConsistencyLevel },
      ): Promise<EntriesOf<Ks>>;
    }
  }
}
