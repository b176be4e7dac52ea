/**
 * An account's OAuth connections (grants): which ones stand, listing them for their owner,
 * ending one, and ending every connection a key rotation or revocation left stale.
 *
 * A connection stands only while its agent is active and still holds the API key the
 * connection was linked with (`GrantRecord.key_hash`). Every token check reads the grant
 * and the agent, so a rotation or revocation ends every connection of the old key in its
 * own commit, however many there are; the grants themselves are then deleted in batches
 * (`endStaleConnections`), resumably: the rotation or revocation commit leaves a mark
 * (`connection_teardowns/<agent>`) that is cleared only when no stale grant is left, and
 * start-up and the tidy-up sweep finish any teardown a crash interrupted.
 *
 * It imports no domain module with state, so `domain/accounts/agents.ts` can call it without a cycle.
 */
import type { Agent } from "./agents.ts";
import { hashApiKey } from "./api_keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { timingSafeEqual } from "../text.ts";
import { keys } from "../../kv/keys.ts";
import { KV_LIMITS } from "../../kv/limits.ts";
import { readMany } from "../../kv/read_many.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { type ClientRecord, dropGrant, type GrantRecord } from "./oauth_records.ts";
import { openCredential } from "./secret.ts";

/** The mark of an unfinished teardown. */
interface TeardownMark {
  started_at: number;
}

/**
 * The hash of the API key a grant was linked with: stored on the grant, or (for a grant
 * stored before the hash was kept) the hash of its sealed credential. Null if it does not open.
 */
async function grantKeyHash(
  deps: Deps,
  grant: Pick<GrantRecord, "agent_id" | "credential" | "key_hash">,
): Promise<string | null> {
  if (grant.key_hash) return grant.key_hash;
  const key = await openCredential(deps, `agent:${grant.agent_id}`, grant.credential);
  return key ? await hashApiKey(key) : null;
}

/**
 * The hash of the key a connection was linked with while it stands (`agent` is its agent,
 * active, and still holds that key), else null. A code exchange stores it on the new grant.
 */
export async function standingKeyHash(
  deps: Deps,
  link: Pick<GrantRecord, "agent_id" | "credential" | "key_hash">,
  agent: Agent | null,
): Promise<string | null> {
  if (!agent || agent.id !== link.agent_id || agent.status !== "active") return null;
  const linked = await grantKeyHash(deps, link);
  return linked !== null && timingSafeEqual(linked, agent.key_hash) ? linked : null;
}

/** True while `grant` stands: `agent` is its agent, active, and holds the key it was linked with. */
export async function grantStands(
  deps: Deps,
  grant: GrantRecord,
  agent: Agent | null,
): Promise<boolean> {
  return (await standingKeyHash(deps, grant, agent)) !== null;
}

/**
 * Marks, inside a rotation or revocation commit, that the agent's stale connections are
 * to be deleted. The commit itself already ends them (see `grantStands`).
 */
export function markTeardown(tx: Tx, agentId: string, now: number): void {
  tx.set(keys.connectionTeardowns(agentId), { started_at: now } satisfies TeardownMark);
}

/** Stages the deletion of a grant, its per-agent index entry and its current refresh token. */
function deleteGrant(op: Deno.AtomicOperation, grant: GrantRecord): void {
  op.delete(keys.oauthGrants(grant.id))
    .delete(keys.oauthGrantsByAgent(grant.agent_id, grant.id))
    .delete(keys.oauthRefreshTokens(grant.refresh_hash));
}

/**
 * Deletes every grant of `agentId` that no longer stands (all of them once the agent is
 * revoked or removed), in batches of at most ten grants per commit, then clears the
 * teardown mark if it is unchanged since this pass began (a newer rotation's mark stays,
 * and this pass runs again). Idempotent and safe alongside live requests: a grant that
 * does not stand never stands again, and grants linked with the current key are kept.
 * Returns how many grants it deleted.
 */
export async function endStaleConnections(deps: Deps, agentId: string): Promise<number> {
  let total = 0;
  for (let pass = 0; pass < 5; pass++) {
    const mark = await deps.kv.get<TeardownMark>(keys.connectionTeardowns(agentId));
    const index = await Array.fromAsync(
      deps.kv.list({ prefix: keys.oauthGrantsByAgent.range(agentId) }),
    );
    for (let i = 0; i < index.length; i += KV_LIMITS.keysPerGetMany) {
      const batch = index.slice(i, i + KV_LIMITS.keysPerGetMany);
      const agent = (await deps.kv.get<Agent>(keys.agents(agentId))).value;
      const grants = await deps.kv.getMany<GrantRecord[]>(
        batch.map((e) => keys.oauthGrants(String(e.key[e.key.length - 1]))),
      );
      const op = deps.kv.atomic();
      let stale = 0;
      for (const [j, g] of grants.entries()) {
        if (g.value === null) op.delete(batch[j].key); // index entry of a grant that expired
        else if (!(await grantStands(deps, g.value, agent))) {
          deleteGrant(op, g.value);
          stale++;
        }
      }
      await op.commit();
      total += stale;
    }
    if (mark.value === null) return total;
    const cleared = await deps.kv.atomic().check(mark).delete(mark.key).commit();
    if (cleared.ok) return total;
  }
  return total;
}

/** Finishes the connection teardowns a crash left unfinished (start-up and the sweep). */
export async function resumeConnectionTeardowns(deps: Deps): Promise<number> {
  const marks = await Array.fromAsync(deps.kv.list({ prefix: keys.connectionTeardowns.range() }));
  for (const e of marks) await endStaleConnections(deps, String(e.key[e.key.length - 1]));
  return marks.length;
}

/** One standing connection as its owner sees it. No token or credential ever appears. */
interface ConnectionView {
  id: string;
  client_id: string;
  client_name: string | null;
  scopes: string[];
  created_at: number;
  /** When the client last redeemed its code or a refresh token (access tokens last an hour). */
  last_used_at: number;
  /** When the connection ends unless the client refreshes it again. */
  expires_at: number;
}

/** Most connections one listing returns (newest first). */
const MAX_LISTED_CONNECTIONS = 100;

/**
 * The standing OAuth connections of `agent`, newest first (at most 100; `truncated` says
 * when there are more). Reads only.
 */
export async function listConnections(
  deps: Deps,
  agent: Agent,
): Promise<{ connections: ConnectionView[]; truncated: boolean }> {
  const now = deps.clock.now();
  const index = await Array.fromAsync(
    deps.kv.list({ prefix: keys.oauthGrantsByAgent.range(agent.id) }),
  );
  const live: GrantRecord[] = [];
  const grants = await readMany<GrantRecord>(
    deps.kv,
    index.map((e) => keys.oauthGrants(String(e.key[e.key.length - 1]))),
  );
  for (const g of grants) {
    if (g.value && g.value.expires_at > now && await grantStands(deps, g.value, agent)) {
      live.push(g.value);
    }
  }
  live.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1));
  const shown = live.slice(0, MAX_LISTED_CONNECTIONS);
  const names = new Map<string, string | null>();
  const clientIds = [...new Set(shown.map((g) => g.client_id))];
  const clients = await readMany<ClientRecord>(
    deps.kv,
    clientIds.map((id) => keys.oauthClients(id)),
  );
  for (const c of clients) if (c.value) names.set(c.value.client_id, c.value.client_name);
  return {
    connections: shown.map((g) => ({
      id: g.id,
      client_id: g.client_id,
      client_name: names.get(g.client_id) ?? null,
      scopes: g.scopes,
      created_at: g.created_at,
      last_used_at: g.refreshed_at,
      expires_at: g.expires_at,
    })),
    truncated: live.length > shown.length,
  };
}

/**
 * Ends one connection of `agentId` at once: its grant, index entry and refresh token go
 * in one commit, so its access and refresh tokens stop working. 404 when the agent has no
 * standing connection with this id.
 */
export async function endConnection(
  deps: Deps,
  agent: Agent,
  connectionId: string,
): Promise<{ id: string; ended: true; client_id: string }> {
  const { value } = await transact(deps.kv, async (tx) => {
    const entry = await tx.get<GrantRecord>(keys.oauthGrants(connectionId));
    const grant = entry.value;
    if (
      !grant || grant.agent_id !== agent.id || grant.expires_at <= deps.clock.now() ||
      !(await grantStands(deps, grant, agent))
    ) {
      throw new BoardError(
        "NOT_FOUND",
        `No OAuth connection of this account was found with id "${connectionId}".`,
        { target: "connection", id: connectionId },
      );
    }
    dropGrant(tx, grant);
    tx.delete(keys.oauthRefreshTokens(grant.refresh_hash));
    return { id: grant.id, ended: true as const, client_id: grant.client_id };
  });
  return value;
}
