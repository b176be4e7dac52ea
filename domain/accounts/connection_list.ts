/**
 * Listing an account's OAuth connections for their owner (`GET /v1/me/connections`): one
 * bounded page of the per-agent grant index, newest first, with a cursor. A page reads at
 * most `limit + 1` index entries, their grants and their clients, however many connections
 * the account holds.
 */
import type { Agent } from "./agent_record.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { UUID_PATTERN } from "../ids.ts";
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany } from "../../kv/read_many.ts";
import { grantStands, MAX_CONNECTIONS_PER_ACCOUNT } from "./connections.ts";
import type { GrantRecord } from "./oauth_records.ts";
import { readAsClaimed } from "../claimed_reads.ts";

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

/** Page sizes of the listing: by default one page holds every connection the cap allows. */
export const CONNECTION_PAGE_LIMIT = {
  min: 1,
  max: MAX_CONNECTIONS_PER_ACCOUNT,
  default: MAX_CONNECTIONS_PER_ACCOUNT,
} as const;

/** One page request: `before` is the `next_before` of the previous page (a connection id). */
export interface ConnectionPageParams {
  limit: number;
  before?: string;
}

/** Checks a `before` cursor: a connection id as `next_before` gave it, else 400 INVALID_CURSOR. */
export function connectionCursor(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!UUID_PATTERN.test(raw)) {
    throw new BoardError(
      "INVALID_CURSOR",
      'Parameter "before" must be the "next_before" of an earlier page (a connection id).',
      { parameter: "before" },
    );
  }
  return raw.toLowerCase();
}

/** One page of connections, newest first. */
interface ConnectionPage {
  connections: ConnectionView[];
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: string | null;
  /** True when older connections may follow (`next_before` is set). */
  truncated: boolean;
}

/**
 * The standing OAuth connections of `agent`, newest first (by when each was authorized), one
 * page of at most `limit`. Connections that ended but are not yet deleted are skipped, so a
 * page can hold fewer than `limit` while `next_before` is set. Reads only. `claimedId`: the
 * id the caller's credential names while `caller` still resolves (domain/claimed_reads.ts):
 * the index is listed with the credential's own read.
 */
export function listConnections(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  page: ConnectionPageParams = { limit: CONNECTION_PAGE_LIMIT.default },
  claimedId: string | null = null,
): Promise<ConnectionPage> {
  return readAsClaimed(caller, claimedId, (id, agent) => connectionPage(deps, id, agent, page));
}

/**
 * One page of `agentId`'s connections in two round trips: the index, then the grants with
 * their clients (an index entry holds its grant's client id).
 */
async function connectionPage(
  deps: Deps,
  agentId: string,
  caller: Agent | Promise<Agent>,
  page: ConnectionPageParams,
): Promise<ConnectionPage> {
  const now = deps.clock.now();
  const prefix = keys.oauthGrantsByAgent.range(agentId);
  const selector = page.before === undefined
    ? { prefix }
    : { prefix, end: keys.oauthGrantsByAgent(agentId, page.before) };
  const index = await Array.fromAsync(
    listTyped(deps.kv, selector, { reverse: true, limit: page.limit + 1 }),
  );
  const scanned = index.slice(0, page.limit);
  const more = index.length > page.limit;
  const clientIds = [
    ...new Set(scanned.map((e) => (typeof e.value === "string" ? e.value : e.value.client_id))),
  ];
  const [grants, clients, agent] = await Promise.all([
    readMany(deps.kv, scanned.map((e) => keys.oauthGrants(String(e.key[e.key.length - 1])))),
    readMany(deps.kv, clientIds.map((id) => keys.oauthClients(id))),
    caller,
  ]);
  const shown: GrantRecord[] = [];
  for (const g of grants) {
    if (g.value && g.value.expires_at > now && await grantStands(deps, g.value, agent)) {
      shown.push(g.value);
    }
  }
  // An index entry that does not hold its grant's client id (none is written so) costs a read.
  const unnamed = [...new Set(shown.map((g) => g.client_id))].filter((id) =>
    !clientIds.includes(id)
  );
  const laterClients = unnamed.length
    ? await readMany(deps.kv, unnamed.map((id) => keys.oauthClients(id)))
    : [];
  const names = new Map<string, string | null>();
  for (const c of [...clients, ...laterClients]) {
    if (c.value) names.set(c.value.client_id, c.value.client_name);
  }
  const last = scanned[scanned.length - 1];
  const nextBefore = more && last ? String(last.key[last.key.length - 1]) : null;
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
    next_before: nextBefore,
    truncated: nextBefore !== null,
  };
}
