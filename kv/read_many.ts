/** Reading any number of keys in one round trip's time (kv/limits.ts caps a getMany). */
import { KV_LIMITS } from "./limits.ts";

/** Reads `keyList` in getMany batches of the most one takes, all batches at once, in order. */
export async function readMany<T>(
  kv: Deno.Kv,
  keyList: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const parts: Promise<Deno.KvEntryMaybe<T>[]>[] = [];
  for (let i = 0; i < keyList.length; i += KV_LIMITS.keysPerGetMany) {
    const part = keyList.slice(i, i + KV_LIMITS.keysPerGetMany);
    parts.push(kv.getMany<T[]>(part) as Promise<Deno.KvEntryMaybe<T>[]>);
  }
  return (await Promise.all(parts)).flat();
}
