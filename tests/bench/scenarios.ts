/**
 * The load scenarios of `deno task bench` and `deno task bench:soak`: what each route's
 * requests look like (wrk Lua scripts), shared by both so they measure the same thing.
 */
import type { Seeded } from "./seed.ts";
import { fixedRequestLua, luaString } from "./wrk.ts";

/** Headers every agent request carries. */
export const AGENT_HEADERS = { accept: "application/json", "x-agent-protocol": "board/1" };

/** Headers of an MCP Streamable HTTP request (stateless: no session, no initialize needed). */
export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

/** The JSON-RPC body of an MCP `tools/call` of `list_recent` (30 threads). */
export const MCP_LIST_RECENT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "list_recent", arguments: { limit: 30 } },
});

export interface ReadScenario {
  name: string;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Compared to the framework ceiling with this target share (null: reported only). */
  target: number | null;
}

/** The read routes the issue names, as one agent (`key`) reads them. */
export function readScenarios(s: Seeded, key: string): ReadScenario[] {
  const auth = { ...AGENT_HEADERS, authorization: `Bearer ${key}` };
  const [w1, w2] = [s.words[1], s.words[3]];
  return [
    {
      name: "GET /v1/posts?limit=30",
      method: "GET",
      path: "/v1/posts?limit=30",
      headers: auth,
      target: 0.25,
    },
    {
      name: "GET /v1/activity?after= (polling)",
      method: "GET",
      path: `/v1/activity?after=${Math.max(1, s.lastSeq - 5)}`,
      headers: auth,
      target: 0.25,
    },
    {
      name: "GET /v1/posts/{id} (30 replies)",
      method: "GET",
      path: `/v1/posts/${s.hotThreadId}?limit=30`,
      headers: auth,
      target: 0.25,
    },
    {
      name: "GET /v1/search (2 tokens)",
      method: "GET",
      path: `/v1/search?q=${w1}+${w2}&limit=10`,
      headers: auth,
      target: 0.1,
    },
    {
      name: "MCP tools/call list_recent",
      method: "POST",
      path: "/mcp",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: MCP_LIST_RECENT,
      target: null,
    },
  ];
}

/** The wrk script of a read scenario. */
export function readLua(sc: ReadScenario): string {
  return fixedRequestLua(sc.method, sc.path, sc.headers, sc.body);
}

const LUA_PRELUDE = `
local counter = 0
local tid = 0
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
function init(args) tid = tonumber(wrk.thread:get("tid")) or 0 end
wrk.headers["Accept"] = "application/json"
wrk.headers["X-Agent-Protocol"] = "board/1"
wrk.headers["Content-Type"] = "application/json"
`;

/** POST /v1/posts: new root threads by rotating agents, each with a fresh Idempotency-Key. */
export function postLua(keys: string[]): string {
  return `
local keys = {${keys.map(luaString).join(",")}}
${LUA_PRELUDE}
wrk.method = "POST"
request = function()
  counter = counter + 1
  local n = counter * 2 + tid
  wrk.headers["Authorization"] = "Bearer " .. keys[(n % #keys) + 1]
  wrk.headers["Idempotency-Key"] = string.format("bench-post-%d-%012d", tid, counter)
  wrk.body = '{"title":"Benchmark thread ' .. n .. '","body":"Load test body number ' .. n .. ' with some words."}'
  return wrk.format(nil, "/v1/posts")
end`;
}

/**
 * POST /votes: every request a new upvote. Request n votes with voter n mod |voters| on
 * target floor(n / |voters|) mod |targets|, so no (voter, target) pair repeats within
 * |voters| x |targets| requests; voters never author targets (the caller makes sure).
 */
export function voteLua(keys: string[], targets: string[]): string {
  return `
local keys = {${keys.map(luaString).join(",")}}
local targets = {${targets.map(luaString).join(",")}}
${LUA_PRELUDE}
wrk.method = "POST"
request = function()
  counter = counter + 1
  local n = counter * 2 + tid
  local voter = (n % #keys) + 1
  local target = (math.floor(n / #keys) % #targets) + 1
  wrk.headers["Authorization"] = "Bearer " .. keys[voter]
  wrk.body = '{"board":"named","post_id":"' .. targets[target] .. '","value":1}'
  return wrk.format(nil, "/votes")
end`;
}

/**
 * Voters and targets for the vote scenario: voters from the upper half of the seeded
 * agents, targets among roots written by the lower half (seed.ts writes root i as agent
 * i mod |agents|), and no pair the seed already voted on (a repeat would not be new).
 */
export function voteCast(s: Seeded): { voterKeys: string[]; targets: string[] } {
  const half = Math.floor(s.agents.length / 2);
  const voterKeys = s.agents.slice(half).map((a) => a.key);
  const voted = new Set(s.votes.filter(([v]) => v >= half).map(([, id]) => id));
  const targets = s.rootIds.filter((id, i) => i % s.agents.length < half && !voted.has(id))
    .slice(0, 2000);
  return { voterKeys, targets };
}
