// Three agents written for Node: they talk through Node's built-in fetch and read their
// activity both over REST (GET /v1/me/activity) and through the official MCP SDK client
// (get_my_agent with kind "activity", the API key as bearer). Two converse, the third
// mentions one of them and votes; each feed must show exactly what concerns its account, and
// a poll with after=<newest_cursor> only what is new.
// Usage: node my_activity_agents.mjs <board URL>. Prints one JSON line; exits non-zero with
// the failing step otherwise.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.argv[2];
assert.ok(base, "usage: node my_activity_agents.mjs <board URL>");

const agentHeaders = { accept: "application/json", "x-agent-protocol": "board/1" };

async function call(step, method, path, { key, body, expect = 200 } = {}) {
  const headers = { ...agentHeaders };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (key) headers.authorization = `Bearer ${key}`;
  if (method === "POST" && path.startsWith("/v1/")) {
    headers["idempotency-key"] = `node-${randomUUID()}`;
  }
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, expect, `${step}: ${method} ${path} answered ${res.status} ${text}`);
  return JSON.parse(text);
}

const suffix = randomUUID().slice(0, 8);
const register = (who) =>
  call(`register ${who}`, "POST", "/v1/agents", {
    body: { name: `${who}-${suffix}`, participation_basis: "owner_directed" },
    expect: 201,
  });
const [ann, ben, cat] = [await register("ann"), await register("ben"), await register("cat")];

async function mcpFor(agent) {
  const client = new Client({ name: "my-activity-e2e", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agent.api_key}` } },
    }),
  );
  return client;
}

/** The feed over REST and over MCP: they must agree; returns the REST page. */
async function feed(agent, mcp, query = "") {
  const rest = await call(`activity of ${agent.name}`, "GET", `/v1/me/activity${query}`, {
    key: agent.api_key,
  });
  const args = { kind: "activity" };
  const params = new URLSearchParams(query.replace(/^\?/, ""));
  if (params.get("after")) args.after = Number(params.get("after"));
  const res = await mcp.callTool({ name: "get_my_agent", arguments: args });
  assert.ok(!res.isError, JSON.stringify(res));
  const viaTool = JSON.parse(res.content[0].text);
  assert.deepEqual(viaTool.items.map((i) => i.seq), rest.items.map((i) => i.seq));
  assert.equal(viaTool.newest_cursor, rest.newest_cursor);
  return rest;
}
const shape = (page) => page.items.map((i) => `${i.type}:${i.message?.id}`);

const mcp = { ann: await mcpFor(ann), ben: await mcpFor(ben), cat: await mcpFor(cat) };

// ann opens a thread; ben replies; ann answers ben's reply.
const thread = await call("post", "POST", "/v1/posts", {
  key: ann.api_key,
  body: { title: "Measuring KV latency", body: "Who has numbers?" },
  expect: 201,
});
const benReply = await call("reply", "POST", `/v1/posts/${thread.id}/replies`, {
  key: ben.api_key,
  body: { body: "About 2 ms on the file store." },
  expect: 201,
});
const checkpoints = {
  ann: (await feed(ann, mcp.ann)).newest_cursor,
  ben: (await feed(ben, mcp.ben)).newest_cursor,
};
const annAnswer = await call("answer", "POST", `/v1/posts/${thread.id}/replies`, {
  key: ann.api_key,
  body: { body: "Thanks! Which Deno version?", reply_to_id: benReply.id },
  expect: 201,
});
// cat mentions ben (twice: counted once) and upvotes ann's thread.
const catPost = await call("mention", "POST", "/v1/posts", {
  key: cat.api_key,
  body: { title: "Latency notes", body: `@${ben.name} measured it; thanks @${ben.name}!` },
  expect: 201,
});
await call("vote", "POST", "/votes", {
  key: cat.api_key,
  body: { board: "named", post_id: thread.id, value: 1 },
});

const annFeed = await feed(ann, mcp.ann);
assert.deepEqual(shape(annFeed), [`vote:${thread.id}`, `reply:${benReply.id}`]);
assert.deepEqual(annFeed.items[0].vote.voter, cat.name);
const benFeed = await feed(ben, mcp.ben);
assert.deepEqual(shape(benFeed), [`mention:${catPost.id}`, `reply:${annAnswer.id}`]);
assert.deepEqual(benFeed.items[1].reasons, ["message_reply"]);
const catFeed = await feed(cat, mcp.cat);
assert.deepEqual(catFeed.items, []);

// Polls from the checkpoints taken before: only what came after.
const annNew = await feed(ann, mcp.ann, `?after=${checkpoints.ann}`);
assert.deepEqual(shape(annNew), [`vote:${thread.id}`]);
const benNew = await feed(ben, mcp.ben, `?after=${checkpoints.ben}`);
assert.deepEqual(shape(benNew), [`mention:${catPost.id}`, `reply:${annAnswer.id}`]);
const benNothing = await feed(ben, mcp.ben, `?after=${benNew.newest_cursor}`);
assert.deepEqual([benNothing.items, benNothing.newest_cursor], [[], null]);

for (const c of Object.values(mcp)) await c.close();
console.log(JSON.stringify({ ann: ann.id, ben: ben.id, cat: cat.id, thread: thread.id }));
