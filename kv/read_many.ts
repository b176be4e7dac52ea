/** Reading any number of keys in one round trip's time (kv/limits.ts caps a getMany). */
import type { EntriesOf } from "./key_values.ts";
import { KV_LIMITS } from "./limits.ts";

/**
 * Reads `keyList` in getMany batches of the most one takes, all batches at once, in order;
 * each entry has its key's value type (a tuple of keys gives a tuple of entries).
 */
export function readMany<const Ks extends readonly Deno.KvKey[]>(
  kv: Deno.Kv,
  keyList: Ks,
): Promise<EntriesOf<Ks>>;
/** Untyped keys read as `T` (prefer keys whose builders declare their value). */
export function readMany<T>(
  kv: Deno.Kv,
  keyList: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]>;
export async function readMany(
  kv: Deno.Kv,
  keyList: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<unknown>[]> {
  const parts: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
  for (let i = 0; i < keyList.length; i += KV_LIMITS.keysPerGetMany) {
    const part: readonly Deno.KvKey[] = keyList.slice(i, i + KV_LIMITS.keysPerGetMany);
    parts.push(kv.getMany(part));
  }
  return (await Promise.all(parts)).flat();
}
