/**
 * Ending an agent's OAuth connections when its key is revoked or the account removed.
 *
 * Token validation already refuses every token of a non-active agent at once (it reads
 * the agent on each request); this deletes the grants themselves so nothing lingers.
 * It imports no domain module, so `domain/accounts.ts` can call it without a cycle.
 */
import { keys } from "../kv/keys.ts";

/** Deletes every grant of `agentId` (in batches; safe to re-run). Returns how many. */
export async function endAgentConnections(kv: Deno.Kv, agentId: string): Promise<number> {
  let total = 0;
  while (true) {
    const batch: Deno.KvKey[] = [];
    for await (
      const e of kv.list({ prefix: keys.oauthGrantsByAgentPrefix(agentId) }, { limit: 100 })
    ) {
      batch.push(e.key);
    }
    if (batch.length === 0) return total;
    const op = kv.atomic();
    for (const key of batch) {
      op.delete(key).delete(keys.oauthGrants(String(key[key.length - 1])));
    }
    await op.commit();
    total += batch.length;
  }
}
