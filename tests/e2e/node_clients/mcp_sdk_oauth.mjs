// A desktop MCP client as the official TypeScript SDK builds one, running under Node: an
// OAuthClientProvider, StreamableHTTPClientTransport and auth(), with a loopback redirect
// URI served by this process (RFC 8252). Nothing here is tailored to the board.
//
// Usage: node mcp_sdk_oauth.mjs <board URL> <JSON of another agent's post and article>
// Protocol on stdout (one JSON object a line):
//   {"event":"authorize","url":…,"redirect":…}  a person must open url and consent
//   {"event":"done",…}                          the whole flow passed
// Any failure exits non-zero with the failing step on stderr.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  auth,
  discoverOAuthServerInfo,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";

const [base, othersJson] = process.argv.slice(2);
const others = JSON.parse(othersJson);
const serverUrl = new URL(`${base}/mcp`);
const emit = (event) => console.log(JSON.stringify(event));

// The loopback redirect: a one-shot HTTP server on a free port, as desktop clients run.
let deliverCode;
const codeArrived = new Promise((resolve, reject) => {
  deliverCode = { resolve, reject };
});
const callback = createServer((req, res) => {
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname !== "/callback") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "content-type": "text/html" });
  res.end("<!doctype html><title>Connected</title><p>You can close this window.</p>");
  const code = url.searchParams.get("code");
  if (code) deliverCode.resolve({ code, state: url.searchParams.get("state") });
  else deliverCode.reject(new Error(`authorization failed: ${url.search}`));
});
await new Promise((resolve) => callback.listen(0, "127.0.0.1", resolve));
const redirect = `http://127.0.0.1:${callback.address().port}/callback`;

/** An in-memory OAuthClientProvider, the shape the SDK's examples use. */
class Provider {
  info = undefined;
  stored = undefined;
  verifier = "";
  stateValue = randomUUID();
  get redirectUrl() {
    return redirect;
  }
  get clientMetadata() {
    return {
      client_name: "Node SDK desktop client",
      redirect_uris: [redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return this.stateValue;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url) {
    emit({ event: "authorize", url: String(url), redirect });
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const provider = new Provider();
const step = async (name, fn) => {
  try {
    return await fn();
  } catch (e) {
    console.error(`step "${name}" failed:`, e);
    process.exit(1);
  }
};

// 1. Connect without a token: 401 → discovery → registration → authorization URL (PKCE S256).
await step("connect, discover, register, authorize", async () => {
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  const client = new Client({ name: "node-sdk-client", version: "1.0.0" });
  await assert.rejects(client.connect(transport), UnauthorizedError);
  assert.ok(provider.info?.client_id, "dynamic registration gave a client_id");
  assert.ok(provider.verifier, "a PKCE verifier was made");
});

// 2. The person consents in a browser; the browser comes back to our loopback server.
const { code, state } = await step("consent", () => codeArrived);
assert.equal(state, provider.stateValue);

// 3. The code for tokens, then an authenticated session.
const client = await step("token and reconnect", async () => {
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  await transport.finishAuth(code);
  assert.equal(provider.stored?.token_type?.toLowerCase(), "bearer");
  assert.ok(provider.stored.refresh_token, "a refresh token was issued");
  const c = new Client({ name: "node-sdk-client", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  return c;
});

const { tools } = await step("tools/list", () => client.listTools());

const json = (r) => JSON.parse(r.content[0].text);
const results = {};
async function call(name, args, expectError) {
  const r = await step(`tools/call ${name}`, () => client.callTool({ name, arguments: args }));
  const body = json(r);
  if (expectError) {
    assert.equal(r.isError, true, `${name}: expected ${expectError}, got ${r.content[0].text}`);
    assert.equal(body.error?.code, expectError, `${name}: ${r.content[0].text}`);
  } else {
    assert.ok(!r.isError, `${name}: ${r.content[0].text}`);
  }
  results[name] = expectError ?? "ok";
  return body;
}

const me = await call("get_my_agent", {});
const postId = randomUUID();
const post = await call("create_post", {
  title: "Hello from the Node SDK",
  body: "Posted through MCP over OAuth.",
  request_id: `sdk-${postId}`,
});
await call("reply_to_thread", {
  thread_id: post.id,
  body: "And a reply.",
  request_id: `sdk-${randomUUID()}`,
});
const looked = await call("lookup_publication", { request_id: `sdk-${postId}` });
assert.equal(looked.found, true);
await call("list_recent", { limit: 5 });
await call("search", { q: "hello" });
await call("fetch", { id: post.id });
await call("read_thread", { root_id: post.id });
await call("get_voting_status", { board: "named", post_ids: [others.post_id] });
await call("vote", { board: "named", post_id: others.post_id, value: 1 });
await call("inspect_votes", { board: "named", post_id: others.post_id });
const publication = {
  schema_version: 1,
  language: "en",
  publication_intent: "show_to_humans",
  idempotency_key: `sdk-${randomUUID()}`,
  title: "An article from the Node SDK",
  blocks: [{
    type: "paragraph",
    text: "This article was submitted by the official MCP client running under Node, " +
      "connected to the board over OAuth after a person consented in a real browser.",
  }],
};
await call("articles_preview", { publication });
const article = await call("articles_submit", {
  kind: "article",
  publication,
  request_id: publication.idempotency_key,
});
await call("articles_read", { action: "article", post_id: article.post_id });
await call("articles_next_review", {});
await call("articles_vote", {
  post_id: others.article_post_id,
  revision_id: others.article_revision_id,
  value: 1,
});
await call("articles_upload", {
  svg:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/></svg>',
  request_id: `sdk-${randomUUID()}`,
});
await call("articles_withdraw", { post_id: article.post_id, request_id: `sdk-${randomUUID()}` });
await call("articles_appeal", {
  post_id: article.post_id,
  revision_id: article.revision_id,
  reason: "Only a rejected revision can be appealed.",
  request_id: `sdk-${randomUUID()}`,
}, "CONFLICT");
await call("pin_thread", { board: "named", thread_id: post.id, pinned: true }, "NOT_VETERAN");
const untested = tools.map((t) => t.name).filter((n) => !(n in results));
assert.deepEqual(untested, [], "every listed tool was called");
await client.close();

// 4. Refresh: the SDK's auth() uses the refresh token (rotated) when tokens are present.
const before = provider.stored;
await step("refresh", async () => {
  assert.equal(await auth(provider, { serverUrl }), "AUTHORIZED");
  assert.notEqual(provider.stored.access_token, before.access_token);
  assert.notEqual(provider.stored.refresh_token, before.refresh_token);
  const c = new Client({ name: "node-sdk-client", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  assert.equal(
    json(await c.callTool({ name: "get_my_agent", arguments: {} })).id,
    me.id,
  );
  await c.close();
});

// 5. Revoke (RFC 7009) at the endpoint the server's metadata names; the token then stops working.
await step("revoke", async () => {
  const info = await discoverOAuthServerInfo(serverUrl);
  const endpoint = info.authorizationServerMetadata?.revocation_endpoint;
  assert.ok(endpoint, "the server's metadata names a revocation endpoint");
  const res = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      token: provider.stored.refresh_token,
      token_type_hint: "refresh_token",
      client_id: provider.info.client_id,
    }),
  });
  assert.equal(res.status, 200, await res.text());
  const c = new Client({ name: "node-sdk-client", version: "1.0.0" });
  const t = new StreamableHTTPClientTransport(serverUrl, {
    requestInit: { headers: { authorization: `Bearer ${provider.stored.access_token}` } },
  });
  await assert.rejects(c.connect(t), (e) => /401|invalid_token|Unauthorized/i.test(String(e)));
});

callback.close();
emit({ event: "done", agent: me, tools: results });
