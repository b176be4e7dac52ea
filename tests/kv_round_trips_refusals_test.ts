/**
 * Sequential KV round trips on the paths that do not succeed (docs/architecture.md, "Round
 * trips"): unknown ids, refused credentials, replays and conflicts of idempotency keys, stale
 * or spent OAuth codes and tokens. tests/kv_round_trips_test.ts sends every operation once on
 * its way to success; a refusal takes other branches (an id looked up elsewhere, a replay's
 * stored answer, a refusal recorded in the audit trail), each of which may add a round trip.
 * Each probe here is held to the goal of its kind, 2 for a read and 3 for a write, and must
 * be refused or replayed as it says, so that it measures the path it names.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  freshNetwork,
  idemKey,
  jsonInit,
  mcpRequest,
  metered,
  post,
  register,
  reply,
  testBoard,
} from "./helpers.ts";
import { articleBody, commentBody } from "./article_helpers.ts";
import {
  authorizePath,
  connect,
  openConsent,
  pkce,
  registerClient,
  submitConsent,
} from "./oauth_helpers.ts";
import { MOD_KEY, modRequest, oauthToken, veterans } from "./pin_helpers.ts";
import { Guest, publishedArticle } from "./website_helpers.ts";

const GOAL = { read: 2, write: 3 } as const;

/** One refused (or replayed) request: its kind, how it is sent, and the answer it must get. */
interface Probe {
  label: string;
  kind: keyof typeof GOAL;
  send: () => Promise<Response>;
  /** The status, and a pattern the body must match (an MCP tool error answers 200). */
  status: number;
  body?: RegExp;
}

Deno.test("refusals, replays and conflicts stay within the round-trip goal of their kind", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY }, { rulesPost: true });
  const { cands } = await veterans(board, 1);
  const vet = cands[0];
  const vetToken = await oauthToken(board, vet);
  const a = await register(board);
  const b = await register(board);
  const rotating = await register(board);
  const root = await post(board, a.key, { title: "Round trips", body: "x" });
  const r1 = await reply(board, b.key, root.id, "A reply");
  const article = await publishedArticle(board, {}, 1);
  const conn = await connect(board);
  const unknown = crypto.randomUUID();
  const badKey = a.key.slice(0, -5) + "AAAAA";
  const get = (path: string, key?: string) => () =>
    board.request(path, { headers: agentHeaders(key) });
  const html = (path: string) => () => board.request(path, { headers: { accept: "text/html" } });
  const send =
    (path: string, body: unknown, key?: string, headers?: Record<string, string>) => () =>
      board.request(path, jsonInit("POST", body, key, headers), freshNetwork());
  const tool = (bearer: string, name: string, args: Record<string, unknown>) => () =>
    mcpRequest(board, bearer, "tools/call", { name, arguments: args });
  const form = (path: string, fields: Record<string, string>) => () =>
    board.request(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });

  // Writes made once so that the probes below replay or conflict with them.
  const net = freshNetwork();
  const postKey = idemKey();
  const postInit = (title: string) =>
    jsonInit("POST", { title, body: "B" }, a.key, { "idempotency-key": postKey });
  await (await board.request("/v1/posts", postInit("T"), net)).text();
  const replyKey = idemKey();
  const replyInit = () => jsonInit("POST", { body: "rr" }, a.key, { "idempotency-key": replyKey });
  await (await board.request(`/v1/posts/${root.id}/replies`, replyInit(), net)).text();
  await (await send("/votes", { board: "named", post_id: root.id, value: 1 }, b.key)()).text();
  const regKey = idemKey();
  const registration = () =>
    board.request(
      "/v1/agents",
      jsonInit(
        "POST",
        { name: "replayed-name", participation_basis: "owner_directed" },
        undefined,
        {
          "idempotency-key": regKey,
        },
      ),
      "10.200.0.1",
    );
  await (await registration()).text();
  const toolKey = idemKey();
  const toolPost = tool(a.key, "create_post", { title: "M", body: "B", request_id: toolKey });
  await (await toolPost()).text();
  const pinKey = idemKey();
  const officialPin = () =>
    modRequest(
      board,
      "POST",
      "/mod/pins",
      { board: "named", thread_id: root.id, pinned: true },
      pinKey,
    );
  await (await officialPin()).text();
  const submission = articleBody();
  await (await send("/v1/articles/posts", submission, a.key)()).text();
  const agentComment = commentBody(article.revision);
  await (await send("/v1/articles/posts", agentComment, b.key)()).text();
  const rotateKey = idemKey();
  const rotate = () =>
    board.request("/v1/me/rotate-key", {
      method: "POST",
      headers: agentHeaders(rotating.key, { "idempotency-key": rotateKey }),
    });
  assert.equal((await rotate()).status, 200);
  // Every OAuth probe below needs the connection's first refresh token spent once.
  const refreshed = await (await form("/oauth/token", {
    grant_type: "refresh_token",
    refresh_token: conn.tokens.refresh_token,
    client_id: conn.clientId,
  })()).json();
  assert.ok(refreshed.refresh_token, JSON.stringify(refreshed));
  const client = await registerClient(board);
  const { challenge, verifier } = await pkce();
  const consent = await openConsent(board, authorizePath(client.client_id, challenge));
  const consentFields = {
    participation_basis: "owner_directed",
    mode: "link",
    api_key: a.key,
    csrf: consent.csrf!,
  };
  const granted = await submitConsent(board, consentFields, consent.cookie);
  const code = new URL(granted.headers.get("location")!).searchParams.get("code")!;
  const exchange = form("/oauth/token", {
    grant_type: "authorization_code",
    code,
    client_id: client.client_id,
    code_verifier: verifier,
    redirect_uri: "http://127.0.0.1:7777/callback",
  });
  assert.equal((await exchange()).status, 200);
  const guest = new Guest(board);

  const probes: Probe[] = [
    // Unknown ids on the reads.
    {
      label: "thread: unknown id",
      kind: "read",
      send: get(`/v1/posts/${unknown}`, a.key),
      status: 404,
    },
    {
      label: "thread: a reply's id",
      kind: "read",
      send: get(`/v1/posts/${r1.id}`, a.key),
      status: 404,
    },
    {
      label: "message: unknown id",
      kind: "read",
      send: get(`/v1/messages/${unknown}`, a.key),
      status: 404,
    },
    { label: "/b thread: unknown id", kind: "read", send: get(`/b/posts/${unknown}`), status: 404 },
    { label: "/b thread: a named id", kind: "read", send: get(`/b/posts/${root.id}`), status: 404 },
    {
      label: "votes: unknown target",
      kind: "read",
      send: get(`/votes?board=named&post_id=${unknown}`),
      status: 404,
    },
    {
      label: "votes: unknown voter",
      kind: "read",
      send: get(`/votes?voter=${unknown}`),
      status: 404,
    },
    {
      label: "article: unknown id",
      kind: "read",
      send: get(`/v1/articles/posts/${unknown}`, a.key),
      status: 404,
    },
    {
      label: "public article: unknown id",
      kind: "read",
      send: get(`/api/articles/posts/${unknown}`),
      status: 404,
    },
    {
      label: "article page: unknown id",
      kind: "read",
      send: html(`/articles/${unknown}`),
      status: 404,
    },
    {
      label: "comment permalink: unknown id",
      kind: "read",
      send: html(`/articles/${article.id}/comments/${unknown}`),
      status: 404,
    },
    // Refused credentials.
    {
      label: "thread: a wrong key",
      kind: "read",
      send: get(`/v1/posts/${root.id}`, badKey),
      status: 401,
    },
    { label: "me: a wrong key", kind: "read", send: get("/v1/me", badKey), status: 401 },
    {
      label: "post: a wrong key",
      kind: "write",
      send: send("/v1/posts", { title: "T", body: "B" }, badKey, { "idempotency-key": idemKey() }),
      status: 401,
    },
    {
      label: "whoami: a wrong token",
      kind: "read",
      send: get("/oauth/whoami", `pb_at_${"x".repeat(43)}`),
      status: 401,
    },
    {
      label: "mod: a wrong key",
      kind: "read",
      send: () =>
        board.request("/mod/audit", {
          headers: { authorization: `Bearer ${"z".repeat(40)}`, accept: "application/json" },
        }),
      status: 401,
    },
    {
      label: "tool: a wrong key",
      kind: "write",
      send: tool(badKey, "create_post", { title: "x", body: "y", request_id: idemKey() }),
      status: 401,
    },
    // Writes refused on their target.
    {
      label: "reply: unknown thread",
      kind: "write",
      send: send(`/v1/posts/${unknown}/replies`, { body: "x" }, a.key, {
        "idempotency-key": idemKey(),
      }),
      status: 404,
    },
    {
      label: "reply: to a reply",
      kind: "write",
      send: send(`/v1/posts/${r1.id}/replies`, { body: "x" }, a.key, {
        "idempotency-key": idemKey(),
      }),
      status: 404,
    },
    {
      label: "vote: unknown id",
      kind: "write",
      send: send("/votes", { board: "named", post_id: unknown, value: 1 }, b.key),
      status: 404,
    },
    {
      label: "vote: own post",
      kind: "write",
      send: send("/votes", { board: "named", post_id: root.id, value: 1 }, a.key),
      status: 403,
    },
    {
      label: "vote: the opposite value",
      kind: "write",
      send: send("/votes", { board: "named", post_id: root.id, value: -1 }, b.key),
      status: 409,
    },
    {
      label: "delete: unknown id",
      kind: "write",
      send: () =>
        board.request(`/v1/posts/${unknown}`, { method: "DELETE", headers: agentHeaders(a.key) }),
      status: 404,
    },
    {
      label: "delete: another's reply",
      kind: "write",
      send: () =>
        board.request(`/v1/posts/${r1.id}`, { method: "DELETE", headers: agentHeaders(a.key) }),
      status: 403,
    },
    {
      label: "pin: unknown thread",
      kind: "write",
      send: () =>
        board.request(
          "/pins",
          jsonInit("POST", { board: "named", thread_id: unknown, pinned: true }, vetToken),
          vet.net,
        ),
      status: 404,
    },
    {
      label: "pin: an API key",
      kind: "write",
      send: send("/pins", { board: "named", thread_id: root.id, pinned: true }, a.key),
      status: 403,
    },
    {
      label: "registration: a taken name",
      kind: "write",
      send: send("/v1/agents", { name: a.name, participation_basis: "owner_directed" }),
      status: 409,
    },
    {
      label: "article vote: unknown id",
      kind: "write",
      send: send(`/v1/articles/posts/${unknown}/votes`, { revision_id: unknown, value: 1 }, b.key),
      status: 404,
    },
    {
      label: "article withdraw: unknown id",
      kind: "write",
      send: send(`/v1/articles/posts/${unknown}/withdraw`, {}, b.key, {
        "idempotency-key": idemKey(),
      }),
      status: 404,
    },
    {
      label: "guest comment: unknown article",
      kind: "write",
      send: async () =>
        (await guest.post(`/articles/${unknown}/comments`, { text: "hello there friend" })).res,
      status: 404,
    },
    {
      label: "mod removal: unknown id",
      kind: "write",
      send: () =>
        modRequest(board, "DELETE", `/mod/posts/${unknown}?board=named`, undefined, idemKey()),
      status: 404,
    },
    {
      label: "mod article decision: unknown id",
      kind: "write",
      send: () =>
        modRequest(board, "POST", `/mod/articles/${unknown}/decision`, {
          action: "restrict",
          reason: "x",
        }, idemKey()),
      status: 404,
    },
    {
      label: "mod official pin: unknown thread",
      kind: "write",
      send: () =>
        modRequest(
          board,
          "POST",
          "/mod/pins",
          { board: "named", thread_id: unknown, pinned: true },
          idemKey(),
        ),
      status: 404,
    },
    // Replays and conflicts of idempotency keys.
    {
      label: "post: replay",
      kind: "write",
      send: () => board.request("/v1/posts", postInit("T"), net),
      status: 200,
      body: /"replayed":true/,
    },
    {
      label: "post: the key with another body",
      kind: "write",
      send: () => board.request("/v1/posts", postInit("T2"), net),
      status: 409,
    },
    {
      label: "reply: replay",
      kind: "write",
      send: () => board.request(`/v1/posts/${root.id}/replies`, replyInit(), net),
      status: 200,
      body: /"replayed":true/,
    },
    {
      label: "vote: exact repeat",
      kind: "write",
      send: send("/votes", { board: "named", post_id: root.id, value: 1 }, b.key),
      status: 200,
      body: /"replayed":true/,
    },
    {
      label: "registration: replay",
      kind: "write",
      send: registration,
      status: 200,
      body: /"replayed":true/,
    },
    { label: "official pin: replay", kind: "write", send: officialPin, status: 200 },
    {
      label: "article submission: replay",
      kind: "write",
      send: send("/v1/articles/posts", submission, a.key),
      status: 200,
      body: /"replayed":true/,
    },
    {
      label: "agent comment: replay",
      kind: "write",
      send: send("/v1/articles/posts", agentComment, b.key),
      status: 200,
      body: /"replayed":true/,
    },
    {
      label: "key rotation: replay with the old key",
      kind: "write",
      send: rotate,
      status: 409,
      body: /already rotated the key/,
    },
    // MCP tools refused or replayed.
    {
      label: "tool fetch: unknown id",
      kind: "read",
      send: tool(a.key, "fetch", { id: unknown }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool read_thread: unknown id",
      kind: "read",
      send: tool(a.key, "read_thread", { root_id: unknown }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool articles_read: unknown id",
      kind: "read",
      send: tool(a.key, "articles_read", { action: "article", post_id: unknown }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool inspect_votes: unknown id",
      kind: "read",
      send: tool(a.key, "inspect_votes", { board: "named", post_id: unknown }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool lookup_publication: unknown key",
      kind: "read",
      send: tool(a.key, "lookup_publication", { request_id: idemKey() }),
      status: 200,
      body: /found.{0,4}false/,
    },
    {
      label: "tool: unknown name",
      kind: "read",
      send: tool(a.key, "no_such_tool", {}),
      status: 200,
      body: /no_such_tool/,
    },
    {
      label: "tool vote: unknown id",
      kind: "write",
      send: tool(a.key, "vote", { board: "named", post_id: unknown, value: 1 }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool reply_to_thread: unknown thread",
      kind: "write",
      send: tool(a.key, "reply_to_thread", {
        thread_id: unknown,
        body: "x",
        request_id: idemKey(),
      }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool articles_vote: unknown id",
      kind: "write",
      send: tool(a.key, "articles_vote", { post_id: unknown, revision_id: unknown, value: 1 }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool pin_thread: unknown thread",
      kind: "write",
      send: tool(vetToken, "pin_thread", { board: "named", thread_id: unknown, pinned: true }),
      status: 200,
      body: /NOT_FOUND/,
    },
    {
      label: "tool create_post: replay",
      kind: "write",
      send: toolPost,
      status: 200,
      body: /replayed/,
    },
    {
      label: "tool vote: a bad token",
      kind: "write",
      send: tool(`pb_at_${"x".repeat(43)}.${a.id}.${a.id}`, "vote", {
        board: "named",
        post_id: root.id,
        value: 1,
      }),
      status: 401,
    },
    // OAuth: spent, unknown and replayed secrets.
    {
      label: "token: unknown refresh token",
      kind: "write",
      send: form("/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: "x".repeat(50),
        client_id: conn.clientId,
      }),
      status: 400,
    },
    {
      label: "token: a replaced refresh token",
      kind: "write",
      send: form("/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: conn.tokens.refresh_token,
        client_id: conn.clientId,
      }),
      status: 200,
    },
    {
      label: "token: unknown code",
      kind: "write",
      send: form("/oauth/token", {
        grant_type: "authorization_code",
        code: "x".repeat(50),
        client_id: conn.clientId,
        code_verifier: "v".repeat(50),
        redirect_uri: "http://127.0.0.1:7777/callback",
      }),
      status: 400,
    },
    {
      label: "token: unknown client",
      kind: "write",
      send: form("/oauth/token", {
        grant_type: "refresh_token",
        refresh_token: refreshed.refresh_token,
        client_id: "nope",
      }),
      status: 401,
    },
    { label: "token: a code replayed", kind: "write", send: exchange, status: 400 },
    {
      label: "revoke: unknown token",
      kind: "write",
      send: form("/oauth/revoke", { token: "y".repeat(60), client_id: conn.clientId }),
      status: 200,
    },
    {
      label: "consent: a used form",
      kind: "write",
      send: () => submitConsent(board, consentFields, consent.cookie),
      status: 403,
    },
  ];

  const over: string[] = [];
  const unlike: string[] = [];
  for (const p of probes) {
    const { res, depth } = await metered(p.send);
    const text = res.bodyUsed ? "" : await res.text();
    if (res.status !== p.status || (p.body && !p.body.test(text))) {
      unlike.push(`${p.label}: ${res.status} ${text.slice(0, 200)}`);
    }
    if (depth > GOAL[p.kind]) over.push(`${p.label}: ${depth} round trips (goal ${GOAL[p.kind]})`);
  }
  assert.deepEqual(unlike, [], "each probe takes the path it names:\n" + unlike.join("\n"));
  assert.deepEqual(over, [], over.join("\n"));
});
