/** Test helpers for an account's OAuth connections: many links with one key, or written straight into KV. */
import { authorizeCode, exchange, pkce, registerClient, type Tokens } from "./oauth_helpers.ts";
import assert from "node:assert/strict";
import type { Agent, GrantRecord } from "../domain/accounts/mod.ts";
import { uuidV7 } from "../domain/ids.ts";
import { keys } from "../kv/keys.ts";
import type { TestBoard } from "./helpers.ts";

/** Links `n` OAuth connections to the account of `apiKey` (one client, `n` authorizations). */
export async function linkConnections(
  board: TestBoard,
  apiKey: string,
  n: number,
  clientName = "Test client",
): Promise<{ clientId: string; tokens: Tokens }[]> {
  const client = await registerClient(board, { client_name: clientName });
  const out: { clientId: string; tokens: Tokens }[] = [];
  for (let i = 0; i < n; i++) {
    const { verifier, challenge } = await pkce();
    const { code } = await authorizeCode(board, client.client_id, challenge, {
      mode: "link",
      api_key: apiKey,
    });
    out.push({
      clientId: client.client_id,
      tokens: await exchange(board, client.client_id, code, verifier),
    });
  }
  return out;
}

/**
 * Writes `n` standing connections of `agentId` straight into KV, oldest first, as code
 * exchanges stored them before the cap existed; returns their ids, oldest first.
 */
export async function seedGrants(
  kv: Deno.Kv,
  agentId: string,
  n: number,
  now: number,
): Promise<string[]> {
  const agent = (await kv.get<Agent>(keys.agents(agentId))).value!;
  const ids: string[] = [];
  for (let start = 0; start < n; start += 100) {
    const op = kv.atomic();
    for (let i = start; i < Math.min(n, start + 100); i++) {
      const id = uuidV7((now - 86_400) * 1000 + i);
      ids.push(id);
      const grant: GrantRecord = {
        id,
        agent_id: agentId,
        client_id: "seeded-client",
        scopes: ["board:read"],
        resource: "http://board.test/mcp",
        credential: { v: 1, iv: "", ct: "" },
        key_hash: agent.key_hash,
        created_at: now - 86_400,
        refreshed_at: now - 86_400,
        expires_at: now + 20 * 86_400,
        refresh_hash: `seeded-${i}`,
      };
      op.set(keys.oauthGrants(id), grant).set(keys.oauthGrantsByAgent(agentId, id), "seeded");
    }
    assert.ok((await op.commit()).ok);
  }
  return ids;
}
