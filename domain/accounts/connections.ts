/**
 * An account's OAuth connections (grants): which ones stand, the cap on how many an account
 * holds, ending one, and ending every connection a key rotation or revocation left stale.
 * Listing them for their owner is in connection_list.ts.
 *
 * A connection stands only while its agent is active and still holds the API key the
 * connection was linked with (`GrantRecord.key_hash`). Every token check reads the grant
 * and the agent, so a rotation or revocation ends every connection of the old key in its
 * own commit, however many there are; the grants themselves are then deleted in bounded
 * runs (`endStaleConnections`), resumably: the rotation or revocation commit leaves a mark
 * (`connection_teardowns/<agent>`) that is cleared only when no stale grant is left, and
 * start-up and the tidy-up sweep finish any teardown a crash interrupted. No step reads an
 * account's whole index: every read of it is a bounded page.
 *
 * It imports no domain module with state, and the account record only from agent_record.ts,
 * so `domain/accounts/agents.ts` can call it without a cycle.
 */
import type { Agent } from "./agent_record.ts";
import { hashApiKey } from "./api_keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { timingSafeEqual } from "../hashing.ts";
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany, readNamed } from "../../kv/read_many.ts";
import { commitRetryingLock, transact, type Tx } from "../../kv/tx.ts";
import {
  type ClientRecord,
  dropGrant,
  type GrantRecord,
  markClientRelease,
} from "./oauth_records.ts";
import type { NewClientCount } from "./oauth_rate_limits.ts";
import { TTL } from "./oauth_tokens.ts";
import { openCredential } from "./secret.ts";

/** The mark of an unfinished teardown. */
interface TeardownMark {
  started_at: number;
}

/**
 * An account's grant head: rewritten by every new grant of the account, with the count of
 * clients that completed their first authorization with it this UTC day.
 */
interface GrantHead extends NewClientCount {
  updated_at: number;
}

/**
 * What an account's grant index entry holds: the client and the hash of the grant's current
 * refresh token (rewritten with it), so the connections can be ended without reading the
 * grants. Entries stored before held the client id only.
 */
type GrantIndexValue = { client_id: string; refresh_hash: string } | string;

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    connectionTeardowns: TeardownMark;
    oauthGrantHeads: GrantHead;
    oauthGrantsByAgent: GrantIndexValue;
  }
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
function markTeardown(tx: Tx, agentId: string, now: number): void {
  tx.set(keys.connectionTeardowns(agentId), { started_at: now } satisfies TeardownMark);
}

/**
 * Stages the deletion of a grant, its per-agent index entry and its current refresh token,
 * and marks its client for the release check (`markClientRelease`).
 */
function deleteGrant(op: Deno.AtomicOperation | Tx, grant: GrantRecord): void {
  op.delete(keys.oauthGrants(grant.id))
    .delete(keys.oauthGrantsByAgent(grant.agent_id, grant.id))
    .delete(keys.oauthRefreshTokens(grant.refresh_hash));
  markClientRelease(op, grant.agent_id, grant.client_id);
}

/**
 * Most OAuth connections one account holds (docs/oauth.md "Connections per account"). The
 * code exchange that would pass it ends the account's oldest connection in its own commit.
 */
export const MAX_CONNECTIONS_PER_ACCOUNT = 100;

/**
 * Index entries one teardown run reads (in one list call, its grants in parallel `getMany`
 * batches, its deletions in commits of at most `GRANTS_PER_COMMIT`). Larger than the cap, so
 * one run ends every connection of an account that never held more than the cap.
 */
export const TEARDOWN_RUN_ENTRIES = 300;
/** Grants deleted per commit (3 mutations and about 300 key bytes each). */
const GRANTS_PER_COMMIT = 100;

/** The grant id an index entry of `oauthGrantsByAgent` names. */
const grantIdOf = (e: Deno.KvEntry<unknown>): string => String(e.key[e.key.length - 1]);

/** An entry of the grant index of an account, newest first (`readNewestConnections`). */
type GrantIndexEntry = Deno.KvEntry<GrantIndexValue>;

/** The client an index entry names. */
export const clientIdOf = (e: GrantIndexEntry): string =>
  typeof e.value === "string" ? e.value : e.value.client_id;

/** An account's grant head and its newest grant index entries (`readNewestConnections`). */
interface AccountConnections {
  head: GrantHead | null;
  /** Newest first. */
  newest: GrantIndexEntry[];
}

/**
 * The account's grant head (read, so checked by the commit) and at most `limit` of its
 * newest grant index entries, read together: the reads of a commit that adds a connection
 * (`capConnections`) or ends them all (`endAccountGrants`). A code exchange rewrites the
 * head, so a commit that read it conflicts with any new connection of the account.
 */
export async function readNewestConnections(
  tx: Tx,
  agentId: string,
  limit = MAX_CONNECTIONS_PER_ACCOUNT + 1,
): Promise<AccountConnections> {
  const [head, newest] = await Promise.all([
    tx.get(keys.oauthGrantHeads(agentId)),
    Array.fromAsync(
      listTyped(tx.kv, { prefix: keys.oauthGrantsByAgent.range(agentId) }, {
        reverse: true,
        limit,
      }),
    ),
  ]);
  return { head: head.value, newest };
}

/**
 * Inside a code exchange commit that adds a connection to `agentId` through the client
 * `clientId`: writes the account's grant head `head` and keeps the account at
 * `MAX_CONNECTIONS_PER_ACCOUNT`. `read` is what `readNewestConnections` read in the commit's
 * read batch (the head is checked and rewritten here, so concurrent exchanges for one account
 * serialize; at most cap + 1 index entries, newest first). When the cap is reached, the oldest
 * of the newest `cap` connections ends in this commit (grant, index entry, refresh token), so
 * the new one makes it `cap` again: the one case that reads once more (that grant and its
 * client, together). A client that only this account ever connected with, and that none of its
 * remaining connections uses, is then kept only as long as a registration that never completed
 * an authorization (`releaseClient`). An account holding more than the cap (stored before the
 * cap existed) also gets a teardown mark: the bounded teardown then ends every connection past
 * the newest `cap`. Returns the id of the connection it ended, or null.
 */
export async function capConnections(
  tx: Tx,
  agentId: string,
  clientId: string,
  now: number,
  head: GrantHead,
  read: AccountConnections,
): Promise<string | null> {
  tx.set(keys.oauthGrantHeads(agentId), head, { expireIn: TTL.refresh * 1000 });
  const { newest } = read;
  if (newest.length < MAX_CONNECTIONS_PER_ACCOUNT) return null;
  if (newest.length > MAX_CONNECTIONS_PER_ACCOUNT) markTeardown(tx, agentId, now);
  const oldest = newest[MAX_CONNECTIONS_PER_ACCOUNT - 1];
  const oldClient = clientIdOf(oldest);
  const ended = await tx.getNamed({
    grant: keys.oauthGrants(grantIdOf(oldest)),
    client: keys.oauthClients(oldClient),
  });
  if (ended.grant.value) deleteGrant(tx, ended.grant.value);
  else tx.delete(oldest.key); // the index entry of a grant that expired
  const stillUsed = oldClient === clientId ||
    newest.slice(0, MAX_CONNECTIONS_PER_ACCOUNT - 1).some((e) => clientIdOf(e) === oldClient);
  if (!stillUsed) releaseClient(tx, agentId, ended.client.value, now);
  return grantIdOf(oldest);
}

/**
 * Keeps a client whose last connection of `agentId` ended only as long as a registration that
 * never completed an authorization (an hour from now), when that account is the only one that
 * ever connected with it (`ClientRecord.owner`): what an account keeps alive is then bounded by
 * its connections, not by every client it ever completed a flow with. A client another account
 * connected with (or stored before owners were kept) keeps its expiry. Returns whether it
 * shortened the client's life.
 */
export function releaseClient(
  tx: Tx,
  agentId: string,
  client: ClientRecord | null,
  now: number,
): boolean {
  const until = now + TTL.pendingClient;
  if (!client || client.owner !== agentId || client.expires_at <= until) return false;
  tx.set(keys.oauthClients(client.client_id), { ...client, expires_at: until }, {
    expireIn: TTL.pendingClient * 1000,
  });
  return true;
}

/**
 * Connections a rotation or revocation deletes in its own commit (3 mutations and about 250
 * key bytes each). An account holding more (only one stored before the cap existed) gets a
 * teardown mark instead for the rest, and the bounded teardown runs delete them.
 */
export const GRANTS_ENDED_IN_COMMIT = MAX_CONNECTIONS_PER_ACCOUNT;

/** What a rotation or revocation reads to end the account's connections in its commit. */
export async function readAccountGrants(tx: Tx, agentId: string): Promise<GrantIndexEntry[]> {
  return (await readNewestConnections(tx, agentId, GRANTS_ENDED_IN_COMMIT + 1)).newest;
}

/**
 * Inside a rotation or revocation commit (which changes the account record, so no connection
 * of it stands any more): deletes the connections `read` (from `readAccountGrants`) found,
 * each grant, its index entry and, where the entry names it, its current refresh token (a
 * token left without its grant is refused, and expires). When the account holds more than
 * `GRANTS_ENDED_IN_COMMIT`, marks the teardown for the rest and returns true: the caller then
 * runs `endStaleConnections` after the commit. Returns false when nothing is left.
 */
export function endAccountGrants(
  tx: Tx,
  agentId: string,
  read: GrantIndexEntry[],
  now: number,
): boolean {
  for (const entry of read.slice(0, GRANTS_ENDED_IN_COMMIT)) {
    tx.delete(keys.oauthGrants(grantIdOf(entry))).delete(entry.key);
    if (typeof entry.value === "object" && entry.value !== null) {
      tx.delete(keys.oauthRefreshTokens(entry.value.refresh_hash));
    }
    markClientRelease(tx, agentId, clientIdOf(entry));
  }
  if (read.length <= GRANTS_ENDED_IN_COMMIT) return false;
  markTeardown(tx, agentId, now);
  return true;
}

/** What one teardown run did. */
interface TeardownRun {
  /** Grants deleted. */
  deleted: number;
  /** True when the account's index was read to its end (the teardown mark is then cleared). */
  done: boolean;
}

/**
 * One bounded teardown run for `agentId`: reads at most `TEARDOWN_RUN_ENTRIES` entries of
 * its index, newest first, and deletes every grant among them that no longer stands (all of
 * them once the agent is revoked or removed), every grant past the newest
 * `MAX_CONNECTIONS_PER_ACCOUNT` standing ones, and index entries of expired grants. When the
 * index was read to its end it clears the teardown mark, if unchanged since the run began (a
 * newer rotation's mark stays, and a later run handles it). Idempotent and safe alongside
 * live requests: a grant that does not stand never stands again, and grants linked with the
 * current key are kept up to the cap. Never holds more than one run's entries in memory.
 */
export async function endStaleConnections(deps: Deps, agentId: string): Promise<TeardownRun> {
  // The mark, the account and its grant index, all named by the account: one round trip.
  const [{ mark, agentEntry }, index] = await Promise.all([
    readNamed(deps.kv, {
      mark: keys.connectionTeardowns(agentId),
      agentEntry: keys.agents(agentId),
    }),
    Array.fromAsync(
      deps.kv.list({ prefix: keys.oauthGrantsByAgent.range(agentId) }, {
        reverse: true,
        limit: TEARDOWN_RUN_ENTRIES + 1,
      }),
    ),
  ]);
  const agent = agentEntry.value;
  const done = index.length <= TEARDOWN_RUN_ENTRIES;
  const run = index.slice(0, TEARDOWN_RUN_ENTRIES);
  const grants = await readMany(
    deps.kv,
    run.map((e) => keys.oauthGrants(grantIdOf(e))),
  );
  const ends: Array<(op: Deno.AtomicOperation) => void> = [];
  let kept = 0;
  for (const [i, g] of grants.entries()) {
    const grant = g.value;
    if (grant === null) ends.push((op) => op.delete(run[i].key));
    else if (kept >= MAX_CONNECTIONS_PER_ACCOUNT || !(await grantStands(deps, grant, agent))) {
      ends.push((op) => deleteGrant(op, grant));
    } else kept++;
  }
  const commits: Promise<Deno.KvCommitResult | Deno.KvCommitError>[] = [];
  for (let i = 0; i < ends.length; i += GRANTS_PER_COMMIT) {
    const batch = ends.slice(i, i + GRANTS_PER_COMMIT);
    commits.push(commitRetryingLock(() => {
      const op = deps.kv.atomic();
      for (const end of batch) end(op);
      return op;
    }));
  }
  await Promise.all(commits);
  const deleted = grants.filter((g) => g.value !== null).length - kept;
  if (done && mark.value !== null) {
    await commitRetryingLock(() => deps.kv.atomic().check(mark).delete(mark.key));
  }
  return { deleted, done };
}

/** The meta entry saying which cap the accounts stored above it were last marked for. */
const CAP_MARKED = keys.metaConnectionCap();

/**
 * Once per cap value (start-up): marks for teardown every account that holds more connections
 * than the cap (stored before the cap existed), so the bounded teardown runs of the sweep trim
 * each to its newest `MAX_CONNECTIONS_PER_ACCOUNT`. Streams the grant index (ordered by
 * account) counting one account at a time; holds only the ids of the accounts to mark.
 * Returns how many it marked.
 */
export async function markAccountsOverCap(deps: Deps): Promise<number> {
  const done = await deps.kv.get(CAP_MARKED);
  if (done.value === MAX_CONNECTIONS_PER_ACCOUNT) return 0;
  const over: string[] = [];
  let current: string | null = null;
  let count = 0;
  for await (const e of deps.kv.list({ prefix: keys.oauthGrantsByAgent.range() })) {
    const agentId = String(e.key[1]);
    if (agentId !== current) [current, count] = [agentId, 0];
    if (++count === MAX_CONNECTIONS_PER_ACCOUNT + 1) over.push(agentId);
  }
  const now = deps.clock.now();
  // Through `transact`: retried while another instance starting together holds the store.
  const commits: Promise<unknown>[] = [];
  for (let i = 0; i < over.length; i += GRANTS_PER_COMMIT) {
    const batch = over.slice(i, i + GRANTS_PER_COMMIT);
    commits.push(transact(deps.kv, (tx) => {
      for (const agentId of batch) {
        tx.set(keys.connectionTeardowns(agentId), { started_at: now } satisfies TeardownMark);
      }
      return Promise.resolve();
    }));
  }
  await Promise.all(commits);
  await transact(deps.kv, async (tx) => {
    const marked = await tx.get(CAP_MARKED);
    if (marked.value !== MAX_CONNECTIONS_PER_ACCOUNT) {
      tx.set(CAP_MARKED, MAX_CONNECTIONS_PER_ACCOUNT);
    }
  });
  return over.length;
}

/** Teardown marks one sweep takes up, and index entries it reads in all. */
const SWEEP_BUDGET = { marks: 50, entries: 20 * TEARDOWN_RUN_ENTRIES } as const;

/**
 * Finishes connection teardowns a crash (or an account holding more than the cap) left
 * unfinished: start-up and the tidy-up sweep. Bounded per call (`SWEEP_BUDGET`): the marks
 * of the accounts not reached stay, and the next sweep goes on. Returns the teardowns finished.
 */
export async function resumeConnectionTeardowns(deps: Deps): Promise<number> {
  const marks = await Array.fromAsync(
    deps.kv.list({ prefix: keys.connectionTeardowns.range() }, { limit: SWEEP_BUDGET.marks }),
  );
  let finished = 0;
  let budget = SWEEP_BUDGET.entries;
  for (const e of marks) {
    if (budget <= 0) break;
    const agentId = String(e.key[e.key.length - 1]);
    // Bounded runs, one after another, until this account is done or the budget is spent.
    let run: TeardownRun;
    do {
      run = await endStaleConnections(deps, agentId);
      budget -= TEARDOWN_RUN_ENTRIES;
    } while (!run.done && budget > 0);
    if (run.done) finished++;
  }
  return finished;
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
    const entry = await tx.get(keys.oauthGrants(connectionId));
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
