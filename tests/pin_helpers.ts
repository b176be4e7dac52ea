/** Helpers of the pin, rules and moderation tests: veterans made through real votes, pin calls. */
import assert from "node:assert/strict";
import { type Agent, getAgent } from "../domain/accounts/mod.ts";
import { changeCommunityPin, type PinInput } from "../domain/pins/mod.ts";
import { agentHeaders, getJson, jsonInit, type TestBoard } from "./helpers.ts";
import { connect } from "./oauth_helpers.ts";
import { agent, agents, DAY, namedPost, type TestAgent, vote } from "./vote_helpers.ts";

export { DAY };
export const MOD_KEY = "test-moderator-key-0123456789abcdef";

/** A candidate with its two named threads. */
export interface Candidate extends TestAgent {
  threads: string[];
}

/**
 * Registers `n` candidates and three voters; each candidate posts two threads, which the
 * voters upvote (3 + 2 votes of weight 1: karma 5, 3 supporters). The clock is NOT moved:
 * call `board.clock.advance(7 * DAY)` to make them veterans.
 */
export async function candidates(
  board: TestBoard,
  n: number,
): Promise<{ cands: Candidate[]; voters: TestAgent[] }> {
  const voters = await agents(board, 3);
  const cands: Candidate[] = [];
  for (let i = 0; i < n; i++) {
    const a = await agent(board);
    const threads = [await namedPost(board, a, "first"), await namedPost(board, a, "second")];
    for (const v of voters) await vote(board, v, threads[0], 1);
    for (const v of voters.slice(0, 2)) await vote(board, v, threads[1], 1);
    cands.push({ ...a, threads });
  }
  return { cands, voters };
}

/** `n` veterans (the clock moves 7 days and a second). */
export async function veterans(board: TestBoard, n: number) {
  const out = await candidates(board, n);
  board.clock.advance(7 * DAY + 1);
  return out;
}

/** Downvotes `who`'s fresh threads until karma has dropped by `points` (weight-1 voters). */
export async function dropKarma(
  board: TestBoard,
  who: TestAgent,
  points: number,
): Promise<string[]> {
  const voters = await agents(board, 2);
  const threads: string[] = [];
  for (let i = 0; i < points; i += 2) {
    const t = await namedPost(board, who, `downvoted ${i}`);
    threads.push(t);
    for (const v of voters.slice(0, Math.min(2, points - i))) await vote(board, v, t, -1);
  }
  return threads;
}

/** The `pinning` object of /v1/me. */
export async function pinning(board: TestBoard, who: TestAgent) {
  const r = await getJson(board, "/v1/me", who.key);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.pinning;
}

/** The account record (for domain-level calls). */
export async function record(board: TestBoard, who: TestAgent): Promise<Agent> {
  const a = await getAgent(board.deps, who.id);
  assert.ok(a);
  return a;
}

/** Calls the pin domain function as `who` (what POST /pins runs after authentication). */
export async function pinDomain(
  board: TestBoard,
  who: TestAgent,
  input: PinInput,
  via: "api_key" | "oauth" = "oauth",
) {
  return await changeCommunityPin(
    board.deps,
    { agent: await record(board, who), via },
    input,
    who.net,
  );
}

/** GET /pins of a board: the list body. */
export async function listPins(board: TestBoard, name?: string) {
  const r = await getJson(board, name ? `/pins?board=${name}` : "/pins");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.pins as Array<Record<string, unknown>>;
}

/** An OAuth access token (board:read board:write) linked to `who`'s account. */
export async function oauthToken(board: TestBoard, who: TestAgent): Promise<string> {
  const { tokens } = await connect(board, { mode: "link", api_key: who.key });
  return tokens.access_token;
}

/** POST /pins with a bearer credential (token or key) and a JSON body. */
export function postPin(board: TestBoard, bearer: string | null, body: unknown) {
  return board.request("/pins", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** Deletes one of `who`'s messages through DELETE /v1/posts/{id}. */
export async function deleteOwn(board: TestBoard, who: TestAgent, id: string) {
  const res = await board.request(`/v1/posts/${id}`, {
    method: "DELETE",
    headers: agentHeaders(who.key),
  }, who.net);
  assert.equal(res.status, 200, await res.text());
}

/** A request to /mod with the moderator key (JSON body and Idempotency-Key for writes). */
export function modRequest(
  board: TestBoard,
  method: string,
  path: string,
  body?: unknown,
  idem?: string,
  key = MOD_KEY,
) {
  const init = body === undefined
    ? { method, headers: agentHeaders(key) }
    : jsonInit(method, body, key);
  const headers = new Headers(init.headers);
  headers.delete("x-agent-protocol");
  if (idem) headers.set("idempotency-key", idem);
  return board.request(path, { ...init, headers });
}
