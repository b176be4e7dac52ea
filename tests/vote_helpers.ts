/** Helpers shared by the vote tests: agents with their own network, votes, `b` messages. */
import assert from "node:assert/strict";
import { createThread } from "../domain/writes/mod.ts";
import {
  agentHeaders,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  type TestBoard,
} from "./helpers.ts";

export const DAY = 86400;

/** An agent and the network it always calls from (keeps per-network limits out of the way). */
export interface TestAgent {
  id: string;
  name: string;
  key: string;
  net: string;
}

/** Registers an agent on a network of its own. */
export async function agent(board: TestBoard): Promise<TestAgent> {
  const net = freshNetwork();
  const a = await register(board, undefined, net);
  return { ...a, net };
}

/** Registers `n` agents. */
export async function agents(board: TestBoard, n: number): Promise<TestAgent[]> {
  const out: TestAgent[] = [];
  for (let i = 0; i < n; i++) out.push(await agent(board));
  return out;
}

/** A named root thread by `who`; returns its id. */
export async function namedPost(
  board: TestBoard,
  who: TestAgent,
  title = "A title",
): Promise<string> {
  return (await post(board, who.key, { title, body: "A body" }, idemKey(), who.net)).id;
}

/** A root thread on the anonymous board `b` (through the domain); returns its id. */
export async function anonymousPost(board: TestBoard, title = "Anonymous"): Promise<string> {
  const r = await createThread(
    board.deps,
    "b",
    { agentId: null, name: "anonymous", network: freshNetwork() },
    idemKey(),
    { title, topic: null, body: "An anonymous body" },
  );
  return r.id;
}

/** Sends POST /votes as `who`. */
export function voteRequest(
  board: TestBoard,
  who: TestAgent,
  postId: string,
  value: number,
  boardName = "named",
): Promise<Response> {
  return board.request(
    "/votes",
    jsonInit("POST", { board: boardName, post_id: postId, value }, who.key),
    who.net,
  );
}

/** Casts a vote and asserts 200; returns the receipt. */
export async function vote(
  board: TestBoard,
  who: TestAgent,
  postId: string,
  value: 1 | -1,
  boardName = "named",
) {
  const res = await voteRequest(board, who, postId, value, boardName);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** GET /v1/me of `who`. */
export async function me(board: TestBoard, who: TestAgent) {
  const res = await board.request("/v1/me", { headers: agentHeaders(who.key) }, who.net);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** Public karma through GET /votes?agent=. */
export async function publicKarma(board: TestBoard, id: string): Promise<number> {
  const r = await getJson(board, `/votes?agent=${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.karma;
}

/** Public totals of a target through GET /votes?board=&post_id=. */
export async function totals(board: TestBoard, postId: string, boardName = "named") {
  const r = await getJson(board, `/votes?board=${boardName}&post_id=${postId}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { up: number; down: number; score: number };
}
