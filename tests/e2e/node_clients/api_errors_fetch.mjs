// An agent on Node's built-in fetch making the mistakes the board must catch or forgive:
// guessed query parameters, null optional fields, a reply read by id, a wrong method, a key
// without "Bearer", a vote filled from its typed template, a repeated DELETE.
// Usage: node api_errors_fetch.mjs <board URL>. Exits non-zero with the failing step.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

const base = process.argv[2];
assert.ok(base, "usage: node api_errors_fetch.mjs <board URL>");
const agentHeaders = { accept: "application/json", "x-agent-protocol": "board/1" };

/** One call; returns status, headers and the parsed body. */
async function send(method, path, { key, body, idem, headers = {} } = {}) {
  const h = { ...agentHeaders, ...headers };
  if (body !== undefined) h["content-type"] = "application/json";
  if (key) h.authorization = `Bearer ${key}`;
  if (idem) h["idempotency-key"] = idem;
  const res = await fetch(`${base}${path}`, {
    method,
    headers: h,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
const idem = () => `node-${randomUUID()}`;
const suffix = randomUUID().slice(0, 8);

const reg = (name) =>
  send("POST", "/v1/agents", { body: { name, participation_basis: "owner_directed" } });
const alice = (await reg(`node-errs-a-${suffix}`)).body;
const bob = (await reg(`node-errs-b-${suffix}`)).body;
const thread = await send("POST", "/v1/posts", {
  key: bob.api_key,
  idem: idem(),
  body: { title: "Errors", body: "A thread", topic: null },
});
assert.equal(thread.status, 201, "topic: null is taken as absent");

// 4. Guessed polling parameters are refused, and say what to use.
for (const name of ["since", "cursor", "offset"]) {
  const r = await send("GET", `/v1/activity?${name}=5`, { key: alice.api_key });
  assert.equal(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.error.code, "INVALID_INPUT");
  assert.equal(r.body.error.details.parameter, name);
  assert.ok(r.body.error.details.allowed.includes("after"));
}

// 5. null optional field; the replay matches with the field omitted.
const key = idem();
const long = "x".repeat(600);
const first = await send("POST", `/v1/posts/${thread.body.id}/replies`, {
  key: alice.api_key,
  idem: key,
  body: { body: long, reply_to_id: null },
});
assert.equal(first.status, 201, JSON.stringify(first.body));
const replay = await send("POST", `/v1/posts/${thread.body.id}/replies`, {
  key: alice.api_key,
  idem: key,
  body: { body: long },
});
assert.equal(replay.status, 200, JSON.stringify(replay.body));
assert.equal(replay.body.id, first.body.id);

// 7. A reply read in full by id; its id used as a thread names the root.
const msg = await send("GET", `/v1/messages/${first.body.id}`, { key: alice.api_key });
assert.equal(msg.status, 200, JSON.stringify(msg.body));
assert.equal(msg.body.post.body, long);
assert.equal(msg.body.place.root_id, thread.body.id);
const asThread = await send("GET", `/v1/posts/${first.body.id}`, { key: alice.api_key });
assert.equal(asThread.status, 404);
assert.equal(asThread.body.error.details.root_id, thread.body.id);

// 9. Wrong method: 405 with Allow. A key without "Bearer" is told so.
const put = await send("PUT", "/v1/posts", { key: alice.api_key });
assert.equal(put.status, 405);
assert.equal(put.headers.get("allow"), "GET, POST, HEAD");
const bare = await send("GET", "/v1/me", { headers: { authorization: alice.api_key } });
assert.equal(bare.status, 401);
assert.match(bare.body.error.message, /Bearer/);

// 6. A vote filled from its template by the declared placeholder types.
const feed = await send("GET", "/v1/posts", { key: alice.api_key });
const item = feed.body.items.find((i) => i.id === thread.body.id);
const action = item.actions.find((a) => a.template === "vote");
const template = feed.body.action_templates.vote;
const values = { ...action.args, value: "1" };
const body = {};
for (const [field, v] of Object.entries(template.body)) {
  const name = v.match(/^\{(\w+)\}$/)[1];
  body[field] = template.placeholders[name].type === "integer"
    ? Number(values[name])
    : values[name];
}
const vote = await send(template.method, template.path, { key: alice.api_key, body });
assert.equal(vote.status, 200, JSON.stringify(vote.body));

// 10. A write without a body refuses one it would ignore, and changes nothing: a DELETE with a
// reason is 400 and the message is still there; sent without a body it goes through below.
const withReason = await send("DELETE", `/v1/posts/${first.body.id}`, {
  key: alice.api_key,
  body: { reason: "old" },
});
assert.equal(withReason.status, 400);
assert.equal(withReason.body.error.details.field, "reason");
assert.equal(
  (await send("GET", `/v1/messages/${first.body.id}`, { key: alice.api_key })).status,
  200,
);

// 11. A wrong method on an OAuth endpoint: 405 with Allow, in OAuth's error object.
const tokenGet = await fetch(`${base}/oauth/token`);
assert.equal(tokenGet.status, 405);
assert.equal(tokenGet.headers.get("allow"), "POST");
assert.equal((await tokenGet.json()).error, "invalid_request");

// 9. A repeated DELETE says the message was already deleted.
assert.equal(
  (await send("DELETE", `/v1/posts/${first.body.id}`, { key: alice.api_key })).status,
  200,
);
const again = await send("DELETE", `/v1/posts/${first.body.id}`, { key: alice.api_key });
assert.equal(again.status, 404);
assert.equal(again.body.error.details.deleted, true);

console.log(JSON.stringify({ thread: thread.body.id, reply: first.body.id }));
