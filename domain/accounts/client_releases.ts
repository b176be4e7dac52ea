/**
 * Releasing clients whose connections ended (docs/oauth.md "What one account keeps alive"):
 * every commit that ends a connection marks its client and agent (`markClientRelease`), and
 * the tidy-up sweep checks each mark: a client only that agent ever connected with, that none
 * of the agent's remaining connections uses, is kept one hour more instead of a month
 * (`releaseClient`). The connection cap releases the client of the connection it ends at once,
 * in the code exchange's own commit.
 */
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import {
  clientIdOf,
  MAX_CONNECTIONS_PER_ACCOUNT,
  readNewestConnections,
  releaseClient,
} from "./connections.ts";

/** Marks one sweep run reads (one list call); the rest wait for the next run. */
const RELEASE_MARKS_PER_RUN = 1000;
/**
 * Clients one commit checks: each client and its mark are checked reads, with the agent's
 * grant head (a commit checks at most 10 keys).
 */
const CLIENTS_PER_COMMIT = 4;
/** Commits under way at once. */
const COMMITS_IN_FLIGHT = 8;

/** One agent's marked clients, checked in one commit. */
interface Chunk {
  agentId: string;
  clientIds: string[];
}

/**
 * Checks the release marks (at most `RELEASE_MARKS_PER_RUN`) and deletes them; returns how many
 * clients it kept one hour more. Safe alongside live requests: each commit reads the clients
 * it may shorten and their marks (checked), so a code exchange that uses one, or a connection
 * of it ending, meanwhile makes it read again.
 */
export async function releaseEndedClients(deps: Deps): Promise<number> {
  const marks = await Array.fromAsync(
    deps.kv.list({ prefix: keys.oauthClientReleases.range() }, { limit: RELEASE_MARKS_PER_RUN }),
  );
  const chunks: Chunk[] = [];
  for (const mark of marks) {
    const [agentId, clientId] = mark.key.slice(-2).map(String);
    const last = chunks.at(-1);
    if (last?.agentId === agentId && last.clientIds.length < CLIENTS_PER_COMMIT) {
      last.clientIds.push(clientId);
    } else chunks.push({ agentId, clientIds: [clientId] });
  }
  let released = 0;
  for (let i = 0; i < chunks.length; i += COMMITS_IN_FLIGHT) {
    const counts = await Promise.all(
      chunks.slice(i, i + COMMITS_IN_FLIGHT).map((chunk) => releaseChunk(deps, chunk)),
    );
    released += counts.reduce((a, b) => a + b, 0);
  }
  return released;
}

/**
 * One commit: the chunk's clients, their marks and the agent's connections read together, the
 * marks deleted. A connection that ends meanwhile marks its client again, which makes this
 * commit read again.
 */
async function releaseChunk(deps: Deps, { agentId, clientIds }: Chunk): Promise<number> {
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const [clients, connections] = await Promise.all([
      tx.getMany(clientIds.map((id) => keys.oauthClients(id))),
      readNewestConnections(tx, agentId),
      tx.getMany(clientIds.map((id) => keys.oauthClientReleases(agentId, id))),
    ]);
    // An account over the cap (stored before it) is not read whole: nothing is released.
    const complete = connections.newest.length <= MAX_CONNECTIONS_PER_ACCOUNT;
    const inUse = new Set(connections.newest.map(clientIdOf));
    let released = 0;
    for (const [i, clientId] of clientIds.entries()) {
      tx.delete(keys.oauthClientReleases(agentId, clientId));
      if (complete && !inUse.has(clientId) && releaseClient(tx, agentId, clients[i].value, now)) {
        released++;
      }
    }
    return released;
  });
  return value;
}
