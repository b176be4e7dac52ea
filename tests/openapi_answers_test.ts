/**
 * Every JSON answer of a scenario that calls each operation is checked against the schema
 * `/openapi.json` documents for that operation and status, and the scenario must reach
 * every documented success answer (apart from the few listed with the test that covers
 * them): the published schemas are those of real answers, not of hopes.
 */
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { buildOpenApi } from "../routes/api/openapi.ts";
import { OPERATIONS } from "../routes/api/registry.ts";
import {
  articleBody,
  authorAction,
  comment,
  ENGLISH_TEXT,
  SIMPLE_SVG,
  submit,
  vote as articleVote,
} from "./article_helpers.ts";
import {
  agentHeaders,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { connect } from "./oauth_helpers.ts";
import { MOD_KEY } from "./pin_helpers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete"];
const esc = (s: string) => s.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * Documented JSON success answers the scenario does not reach, each covered elsewhere:
 * a pin needs a veteran (tests/pins_test.ts), an appeal a rejected revision
 * (tests/articles_lifecycle_test.ts), `/mcp` answers JSON-RPC (tests/mcp_tools_test.ts).
 */
const ELSEWHERE = new Set([
  "POST /pins 200",
  "POST /v1/articles/posts/{id}/appeal 200",
  "POST /mcp 200",
]);

/**
 * Fields of `value` its schema does not name ("items[].target.agent_id"), looked for where the
 * schema lists properties and is not open (`additionalProperties: true`); of alternatives
 * (`anyOf`, `oneOf`) of the value's type, the one that names the most. A generated client reads
 * only named fields.
 */
function undeclaredFields(doc: Json, schema: Json | undefined, value: unknown, at = ""): string[] {
  while (schema?.$ref) {
    schema = (schema.$ref as string).slice(2).split("/").reduce(
      (o: Json, k: string) => o?.[k.replaceAll("~1", "/").replaceAll("~0", "~")],
      doc,
    );
  }
  if (!schema || value === null || typeof value !== "object") return [];
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives) {
    const kind = Array.isArray(value) ? "array" : "object";
    return alternatives.filter((s) =>
      s.$ref || s.type === undefined || [s.type].flat().includes(kind)
    )
      .map((s) => undeclaredFields(doc, s, value, at))
      .sort((a, b) => a.length - b.length)[0] ?? [];
  }
  if (Array.isArray(value)) {
    return value.flatMap((v) => undeclaredFields(doc, schema.items, v, `${at}[]`));
  }
  if (!schema.properties || schema.additionalProperties === true) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k in schema.properties
      ? undeclaredFields(doc, schema.properties[k], v, `${at}.${k}`)
      : [`${at}.${k}`.slice(1)]
  );
}

/**
 * Answers whose documented schema types only a frame: `/openapi.json` is the document itself,
 * checked against the OpenAPI 3.1 schema by tests/openapi_test.ts.
 */
const FRAME_ONLY = new Set(["GET /openapi.json 200"]);

/** A board whose every JSON answer is validated against the documented schema. */
function checking(board: TestBoard, doc: Json, seen: Set<string>): TestBoard {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: "https://openapi.test/doc" });
  const templates = Object.keys(doc.paths)
    .map((p) => ({ p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`) }))
    // Literal paths before templated ones (`/mod/comments/pending` before `{id}`).
    .sort((a, b) => (a.p.match(/\{/g)?.length ?? 0) - (b.p.match(/\{/g)?.length ?? 0));
  const request: TestBoard["request"] = async (path, init, network) => {
    const res = await board.request(path, init, network);
    const method = (init?.method ?? "GET").toLowerCase();
    const pathname = new URL(path, "http://x").pathname;
    const template = templates.find((t) => t.re.test(pathname) && doc.paths[t.p][method])?.p;
    if (!template || !/json/.test(res.headers.get("content-type") ?? "")) return res;
    const key = `${method.toUpperCase()} ${template} ${res.status}`;
    const pointer = `/paths/${esc(template)}/${method}/responses/${res.status}/content/${
      esc("application/json")
    }/schema`;
    const body = await res.clone().json();
    const validate = ajv.getSchema(`https://openapi.test/doc#${pointer}`);
    assert.ok(validate, `${key}: status not documented: ${JSON.stringify(body)}`);
    assert.ok(validate(body), `${key}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    if (!FRAME_ONLY.has(key)) {
      const unnamed = undeclaredFields(doc, validate.schema as Json, body);
      assert.deepEqual(unnamed, [], `${key}: answered fields its schema does not name`);
    }
    seen.add(key);
    return res;
  };
  return { ...board, request };
}

/** Every documented JSON 2xx answer: "METHOD /path status". */
function documentedAnswers(doc: Json): string[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).filter(([m]) => METHODS.includes(m)).flatMap(([m, op]) =>
      Object.entries((op as Json).responses).filter(([status, r]) =>
        status.startsWith("2") && (r as Json).content?.["application/json"]
      ).map(([status]) => `${m.toUpperCase()} ${path} ${status}`)
    )
  );
}

/**
 * `raw` with every JSON answer checked against the published document, and request helpers:
 * `ok` (the status, then the body), `get` as an agent, `mod` as the moderator.
 */
function checkedBoard(raw: TestBoard) {
  const doc = buildOpenApi(raw.deps.config.baseUrl, OPERATIONS) as Json;
  const seen = new Set<string>();
  const board = checking(raw, doc, seen);
  const ok = async (res: Promise<Response>, status = 200) => {
    const r = await res;
    const body = await r.json();
    assert.equal(r.status, status, JSON.stringify(body));
    return body;
  };
  const get = (path: string, key?: string) =>
    ok(board.request(path, { headers: agentHeaders(key) }));
  const mod = (method: string, path: string, body?: unknown) =>
    ok(board.request(path, {
      method,
      headers: {
        ...agentHeaders(MOD_KEY),
        "idempotency-key": idemKey(),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }));
  return { doc, seen, board, ok, get, mod };
}

Deno.test("every documented success answer is what the board really answers", async () => {
  await using raw = await testBoard({ moderatorKey: MOD_KEY, testClock: true }, {
    rulesPost: true,
  });
  const { doc, seen, board, ok, get, mod } = checkedBoard(raw);

  // Accounts and the named board.
  const author = await register(board);
  const voter = await register(board);
  const root = await post(board, author.key, { title: "Schemas", body: "Checked answers." });
  const answer = await reply(board, voter.key, root.id, "A reply.");
  /** A write and its replay: 201, then 200 `replayed: true`. */
  const twice = async (path: string, body: unknown, key?: string) => {
    const idem = idemKey();
    const send = () =>
      board.request(path, jsonInit("POST", body, key, { "idempotency-key": idem }));
    const first = await ok(send(), 201);
    assert.equal((await ok(send())).replayed, true);
    return { ...first, idem };
  };
  const twiceRoot = await twice("/v1/posts", { title: "Twice", body: "A body" }, author.key);
  const again = await twice(`/v1/posts/${root.id}/replies`, { body: "Again" }, voter.key);
  await twice("/v1/agents", {
    name: `twice-${crypto.randomUUID().slice(0, 8)}`,
    participation_basis: "owner_directed",
  });
  for (
    const path of [
      "/v1/me",
      "/v1/posts",
      "/v1/activity",
      `/v1/posts/${root.id}`,
      `/v1/messages/${again.id}`,
    ]
  ) {
    await get(path, author.key);
  }
  await get("/v1/search?q=checked", voter.key);
  await ok(board.request("/v1/me/publications/lookup", {
    headers: { ...agentHeaders(author.key), "idempotency-key": twiceRoot.idem },
  }));

  // Votes, voting status, pins, rules.
  const cast = await ok(
    board.request(
      "/votes",
      jsonInit("POST", { board: "named", post_id: root.id, value: 1 }, voter.key),
    ),
  );
  assert.equal(cast.weight >= 1, true);
  await get(`/v1/voting?board=named&post_ids=${root.id},${answer.id}`, voter.key);
  for (const q of ["", `?board=named&post_id=${root.id}&voters=true`, `?agent=${author.id}`]) {
    await get(`/votes${q}`);
  }
  await get(`/votes?voter=${voter.id}`);
  // The author's activity: the voter's reply and vote, each with its message summary.
  assert.equal((await get("/v1/me/activity", author.key)).items.length >= 2, true);
  await get("/pins");
  const rules = await get("/v1/rules", author.key);
  await get("/v1/rules/revisions", author.key);
  await get(`/v1/rules/revisions/${rules.revision}`, author.key);
  await ok(board.request(
    "/v1/rules",
    jsonInit("PUT", { text: "Be kind. Cite sources.", base_revision: rules.revision }, author.key, {
      "idempotency-key": idemKey(),
    }),
  ));

  // The anonymous board.
  const anon = await twice("/b/posts", { title: "Anon", body: "Hi" });
  const re = await twice(`/b/posts/${anon.id}/replies`, { body: "Re" });
  for (const path of ["/b/posts", "/b/activity", `/b/posts/${anon.id}`, `/b/messages/${re.id}`]) {
    await get(path);
  }

  // Articles, agents and public.
  const assetRes = await ok(board.request(
    "/v1/articles/assets",
    jsonInit("POST", { svg: SIMPLE_SVG }, author.key, { "idempotency-key": idemKey() }),
  ));
  // A figure that declares no size: its receipt's width, height and view box are null.
  await ok(board.request(
    "/v1/articles/assets",
    jsonInit("POST", { svg: '<svg xmlns="http://www.w3.org/2000/svg"/>' }, author.key, {
      "idempotency-key": idemKey(),
    }),
  ));
  const art = await submit(board, author.key);
  const articleKey = idemKey();
  const body = articleBody({ idempotency_key: articleKey, title: "A second article" });
  await ok(board.request("/v1/articles/posts", jsonInit("POST", body, author.key)), 202);
  await ok(board.request("/v1/articles/posts", jsonInit("POST", body, author.key)), 200);
  const figure = { type: "svg", asset_id: assetRes.asset_id, alt: "A square" };
  const withFigure = articleBody();
  withFigure.blocks = [...(withFigure.blocks as unknown[]), figure];
  await ok(board.request("/v1/articles/preview", jsonInit("POST", withFigure, author.key)));
  for (
    const path of [
      "/v1/articles/capabilities",
      "/v1/articles/posts",
      `/v1/articles/posts/${art.post_id}`,
      "/v1/articles/activity",
      "/v1/articles/review-queue/next",
    ]
  ) await get(path, voter.key);
  await articleVote(board, voter.key, art.post_id, art.revision_id);
  const c1 = await comment(board, voter.key, art.revision_id);
  await get(`/v1/articles/posts/${art.post_id}/comments`, voter.key);
  await ok(authorAction(
    board,
    author.key,
    `/v1/articles/posts/${art.post_id}/withdraw`,
    { revision_id: art.revision_id },
  ));
  await get("/api/articles/feed");

  // Moderation.
  await mod("GET", "/mod/comments/pending");
  await mod("GET", "/mod/articles/appeals");
  await mod("GET", `/mod/articles/${art.post_id}/comments`);
  await mod("POST", `/mod/comments/${c1.comment_id}/decision`, {
    action: "reject",
    reason: "Off topic.",
  });
  await mod("POST", "/mod/pins", { board: "named", thread_id: root.id, pinned: true });
  await mod("PUT", "/mod/rules", { text: "Moderated rules." });
  await mod("POST", "/mod/clock", { advance_seconds: 60 });
  await mod("DELETE", `/mod/posts/${answer.id}`);
  await mod("GET", "/mod/audit");

  // Recommendations publish an article during grace (docs/articles.md): the public reads.
  const published = await submit(board, author.key, { title: "A published article" });
  for (const who of [voter, await register(board), await register(board)]) {
    await articleVote(board, who.key, published.post_id, published.revision_id);
  }
  const feed = await get("/api/articles/feed");
  const shown = feed.items.find((i: Json) => i.id === published.post_id);
  assert.ok(shown, JSON.stringify(feed.items));
  for (const p of ["", "/comments", "/source"]) await get(`/api/articles/posts/${shown.id}${p}`);
  await mod("POST", `/mod/articles/${published.post_id}/decision`, {
    action: "restrict",
    reason: "Checked by the operator.",
  });

  // OAuth and the account's connections; then the destructive account calls.
  const { clientId, tokens } = await connect(board);
  const who = await ok(board.request("/oauth/whoami", {
    headers: { authorization: `Bearer ${tokens.access_token}` },
  }));
  assert.ok(who.agent_id);
  // The MCP default endpoints answer as their /oauth/… originals.
  const aliased = await ok(
    board.request("/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:7777/callback"] }),
    }),
    201,
  );
  assert.ok(aliased.client_id);
  const refreshed = await ok(board.request("/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      client_id: clientId,
      refresh_token: tokens.refresh_token,
    }).toString(),
  }));
  assert.ok(refreshed.access_token);
  await get("/.well-known/oauth-authorization-server");
  await get("/.well-known/oauth-protected-resource/mcp");
  await connect(board, { mode: "link", api_key: author.key });
  const list = await get("/v1/me/connections", author.key);
  assert.equal(list.connections.length, 1, JSON.stringify(list));
  await ok(board.request(`/v1/me/connections/${list.connections[0].id}`, {
    method: "DELETE",
    headers: agentHeaders(author.key),
  }));
  await ok(
    board.request(`/v1/posts/${root.id}`, { method: "DELETE", headers: agentHeaders(author.key) }),
  );
  const rotated = await ok(board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: { ...agentHeaders(author.key), "idempotency-key": idemKey() },
  }));
  await ok(board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(rotated.api_key),
  }));
  await mod("DELETE", `/mod/agents/${voter.id}`);
  // The audit trail again, now holding an account removal.
  await mod("GET", "/mod/audit?limit=30");
  await ok(board.request("/openapi.json"));
  await ok(board.request("/healthz"));

  const missing = documentedAnswers(doc).filter((k) => !seen.has(k) && !ELSEWHERE.has(k));
  assert.deepEqual(
    missing,
    [],
    "documented success answers the scenario never checked: send a request that gets each answer in the scenario above (through `board`, `get` or `ok`), or, when another test covers it, list it in ELSEWHERE with that test",
  );
});

Deno.test("answers in states the scenario above does not reach match their schemas too", async () => {
  await using raw = await testBoard({ moderatorKey: MOD_KEY, testClock: true });
  const { board, ok, get, mod } = checkedBoard(raw);
  const author = await register(board);
  const readers = [await register(board), await register(board), await register(board)];

  // An article with a figure without a caption (`caption: null`), published by recommendations,
  // read by agents (each figure's source inline) and by the public.
  const asset = await ok(board.request(
    "/v1/articles/assets",
    jsonInit("POST", { svg: SIMPLE_SVG }, author.key, { "idempotency-key": idemKey() }),
  ));
  const art = await submit(board, author.key, {
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "svg", asset_id: asset.asset_id, alt: "A square" },
    ],
  });
  for (const who of readers) await articleVote(board, who.key, art.post_id, art.revision_id);
  const read = await get(`/v1/articles/posts/${art.post_id}`, readers[0].key);
  assert.deepEqual(read.article.blocks[1].caption, null);
  for (const p of ["", "/source"]) await get(`/api/articles/posts/${art.post_id}${p}`);

  // A comment of every block type a comment takes: a list has items, not text.
  const listed = await comment(board, readers[0].key, art.revision_id, {
    blocks: [
      { type: "paragraph", text: "I read the whole article and the argument is clear." },
      { type: "list", items: ["The checks are listed.", "Each one has a reason."] },
      { type: "quote", text: "every submission is checked" },
      { type: "code", text: "deno task test" },
    ],
  });
  const comments = await get(`/v1/articles/posts/${art.post_id}/comments`, readers[0].key);
  assert.ok(comments.items.some((c: Json) => c.blocks?.some((b: Json) => b.type === "list")));
  await get(`/api/articles/posts/${art.post_id}/comments`);
  await mod("GET", `/mod/articles/${art.post_id}/comments`);

  // A restricted article under an open appeal: its decision fields are null until decided.
  await mod("POST", `/mod/articles/${art.post_id}/decision`, {
    action: "restrict",
    reason: "Checked by the operator.",
  });
  await ok(authorAction(board, author.key, `/v1/articles/posts/${art.post_id}/appeal`, {
    revision_id: art.revision_id,
    reason: "The figure is my own drawing.",
  }));
  const appealed = await get(`/v1/articles/posts/${art.post_id}`, author.key);
  assert.equal(appealed.article.appeal.decided_at, null);
  await mod("GET", "/mod/articles/appeals");
  await mod("POST", `/mod/articles/${art.post_id}/decision`, {
    action: "restore",
    reason: "The figure is the author's own.",
    decides_appeal: true,
  });
  // A decision about a held comment that is published: refused, and audited as a refusal.
  const notHeld = await board.request(
    `/mod/comments/${listed.comment_id}/decision`,
    jsonInit("POST", { action: "reject", reason: "Off topic.", decides_pending: true }, MOD_KEY, {
      "idempotency-key": idemKey(),
    }),
  );
  assert.equal(notHeld.status, 409, await notHeld.text());
  // The audit trail of every kind of action the scenario took.
  await mod("GET", "/mod/audit?limit=30");

  // An account past the age of the whole age part: no next part (`next_age_part_at: null`).
  raw.clock.advance(31 * 86_400);
  const me = await get("/v1/me", author.key);
  assert.equal(me.voting.maturity.next_age_part_at, null);
  const thread = await post(board, readers[1].key, { title: "Aged", body: "An old account." });
  await get(`/v1/voting?board=named&post_ids=${thread.id}`, author.key);
});
