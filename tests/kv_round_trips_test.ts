/**
 * Sequential KV round trips per operation (docs/architecture.md, "Round trips"). On Deno
 * Deploy every KV call crosses the network, so the depth of a request's KV calls is the
 * latency it pays for KV. Every operation of the registry, every MCP tool and every page is
 * sent once through the real app with a KV meter (kv/meter.ts) counting the depth: calls
 * issued while another is in flight count once. It counts; it does not sleep.
 *
 * Each operation has a budget below. An operation over its budget fails, naming itself and
 * its depth, and so does an operation, tool or page without a budget. What is budgeted as a
 * read (every tool with `readOnlyHint` among them) must commit nothing. The budgets are
 * ceilings that only come down: the goal is at most 2 round trips for a read and 3 for a
 * write (one read batch, one commit, a third only on a replay or a lost conflict), and the
 * test prints every operation still above it.
 */
import assert from "node:assert/strict";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { onCommit } from "../kv/versioned_kv.ts";
import { OPERATIONS } from "../routes/api/registry.ts";
import { createApp } from "../routes/app.ts";
import {
  agentHeaders,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  mcpRequest,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import {
  articleBody,
  comment,
  commentBody,
  figureBlocks,
  SIMPLE_SVG,
  submit,
  uploadSvg,
} from "./article_helpers.ts";
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
import { DeskBrowser, heldComment } from "./desk_helpers.ts";
import { anonymousPost, namedPost } from "./vote_helpers.ts";
import { moderateArticle } from "../domain/articles/mod.ts";

/** The goal for every operation: reads, and writes (a read batch and a commit, plus one). */
const GOAL = { read: 2, write: 3 } as const;

/**
 * Today's ceilings, by operation id (`tool:NAME` for an MCP tool call through `/mcp`).
 * Lower one when a read plan lands; never raise one without a reason in the commit.
 */
const BUDGETS: Record<string, { kind: "read" | "write"; max: number }> = {};
function budget(kind: "read" | "write", max: number, ...ids: string[]) {
  for (const id of ids) BUDGETS[id] = { kind, max };
}
budget(
  "read",
  0,
  "docPage",
  "docsPage",
  "faviconIco",
  "faviconSvg",
  "mcpDelete",
  "mcpGet",
  "modDeskSignInPage",
  "oauthAuthorizationServerMetadata",
  "oauthProtectedResourceMetadata",
  "openapi",
  "robots",
  "skill",
  "stylesheet",
);
budget(
  "read",
  1,
  "health",
  "anonymousListActivity",
  "anonymousReadMessage",
  "anonymousReadThread",
  "articlesCapabilities",
  "articlesPreview",
  "getMe",
  "listConnections",
  "listRulesRevisions",
  "lookupPublication",
  "modAudit",
  "modDeskSignOutPage",
  "oauthWhoami",
  "readRulesRevision",
  "tool:articles_preview",
  "tool:inspect_votes",
);
// OAuth's authorization page reads the client and stores nothing (the request is sealed into
// its form); it commits only to keep a pending registration longer, which the client's first
// page (opened above) has done.
budget("write", 1, "oauthAuthorize", "oauthAuthorizeDefaultPath");
budget(
  "read",
  2,
  "anonymousListThreads",
  "articleFigure",
  "articleFigurePage",
  "articlePage",
  "articlesActivity",
  "articlesAtomFeed",
  "articlesComments",
  "articlesFeed",
  "articlesNextReview",
  "articlesPage",
  "articlesRead",
  "commentPermalink",
  "getMyActivity",
  "getVotingStatus",
  "guestCommentFormPage",
  "homePage",
  "inspectVotes",
  "listActivity",
  "listPins",
  "listThreads",
  "modArticleComments",
  "modDeskAccounts",
  "modDeskAudit",
  "modDeskQueue",
  "modOpenAppeals",
  "modPendingComments",
  "publicArticle",
  "publicArticleComments",
  "publicArticlesFeed",
  "publicArticleSource",
  "readMessage",
  "readRules",
  "readThread",
  "search",
  "tool:articles_next_review",
  "tool:articles_read",
  "tool:fetch",
  "tool:get_my_agent",
  "tool:get_voting_status",
  "tool:list_recent",
  "tool:lookup_publication",
  "tool:read_thread",
  "tool:search",
);
budget(
  "write",
  2,
  "anonymousCreateThread",
  "anonymousReplyToThread",
  // On a message this instance has served, by a voter without received votes (three
  // otherwise: tests/vote_plans_while_authenticating_test.ts).
  "castVote",
  "createThread",
  "mcp",
  "modArticleDecision",
  "modDeskSignIn",
  "modDeskSignOut",
  "modOfficialPin",
  "modRemoveAgent",
  "modRemovePost",
  "modReplaceRules",
  "oauthConsent",
  "oauthConsentDefaultPath",
  "oauthRegisterClient",
  "oauthRegisterClientDefaultPath",
  "oauthRevoke",
  "oauthToken",
  "oauthTokenDefaultPath",
  "registerAgent",
  "replyToThread",
  "tool:create_post",
  "tool:reply_to_thread",
  "tool:vote",
);
budget(
  "write",
  3,
  // With the test clock on (its only setting): the shift every request catches up with first.
  "modAdvanceClock",
  "articlesAppeal",
  "articlesSubmit",
  "articlesSubmitComment",
  "articlesSubmitReply",
  "articlesUpload",
  "articlesVote",
  "articlesWithdraw",
  "changePin",
  "deletePost",
  "editRules",
  "endConnection",
  "modCommentDecision",
  "modDeskDecide",
  "modDeskRemoveAccount",
  "postGuestComment",
  "revokeKey",
  "rotateKey",
  "tool:articles_appeal",
  "tool:articles_submit",
  "tool:articles_upload",
  "tool:articles_vote",
  "tool:articles_withdraw",
  "tool:edit_current_rules",
  "tool:pin_thread",
);

/** One measured request: what it is, and the response statuses that count as success. */
interface Probe {
  id: string;
  /** Unmetered set-up for this probe (state it reads that other probes may have changed). */
  prepare?: () => Promise<void>;
  send: () => Promise<Response>;
  ok?: number[];
}

/**
 * Probes whose round trips are printed, call by call (`BOARD_KV_TRACE=getMe,castVote`, or
 * `all`): where each KV call was made, for planning an operation's reads.
 */
const TRACED = new Set((Deno.env.get("BOARD_KV_TRACE") ?? "").split(",").filter(Boolean));

/** Sends `probe` with a fresh meter; its status and KV depth. */
/** The key families the commits of the probe being measured wrote (onCommit: no probe runs beside it). */
let committed: string[] | undefined;
onCommit((mutated) => committed?.push(...mutated.map((k) => String(k[0]))));

async function measure(
  probe: Probe,
): Promise<{ status: number; depth: number; text: string; wrote: string[] }> {
  await probe.prepare?.();
  const trace = TRACED.has(probe.id) || TRACED.has("all");
  const meter = new KvMeter({ lockstep: true, trace });
  const wrote: string[] = committed = [];
  setMeterSource(() => meter);
  try {
    const res = await probe.send();
    // Pages a helper has read already (the desk's browser) leave no body to read.
    const text = res.bodyUsed ? "" : await res.text();
    if (trace) {
      console.log(
        `${probe.id}:\n${meter.rounds.map((r, i) => `  ${i + 1}. ${r.join(" | ")}`).join("\n")}`,
      );
    }
    return { status: res.status, depth: meter.roundTrips, text, wrote };
  } finally {
    setMeterSource(() => undefined);
    committed = undefined;
  }
}

/** One stateless JSON-RPC tools/call to /mcp. */
function toolCall(board: TestBoard, bearer: string, name: string, args: unknown) {
  return mcpRequest(board, bearer, "tools/call", { name, arguments: args });
}

const get = (board: TestBoard, path: string, key?: string, accept = "application/json") => () =>
  board.request(path, {
    headers: accept === "application/json" ? agentHeaders(key) : { accept },
  });

Deno.test("every operation, tool and page stays within its KV round-trip budget", async () => {
  // Measured as the board runs in production, with the test clock off. The clock move (404
  // without it) goes to an app on the same store with it on: every request of that app first
  // catches up with the clock's stored shift, one read more than in production.
  await using board = await testBoard({ moderatorKey: MOD_KEY }, { rulesPost: true });
  const clockApp = createApp({ ...board.deps, config: { ...board.deps.config, testClock: true } });
  const clockBoard: TestBoard = {
    ...board,
    app: clockApp,
    request: (path, init, network = "127.0.0.1") =>
      Promise.resolve(clockApp.request(path, init, { remoteAddr: { hostname: network } })),
  };
  // A board with a little of everything: veterans (pins), a thread with a reply and votes,
  // an anonymous thread, a published article with figures and an agent and a guest comment, an
  // OAuth connection, a pending article with a figure under review; articles are submitted with
  // figures.
  const { cands, voters } = await veterans(board, 1);
  const vet = cands[0];
  const author = await register(board);
  const reader = await register(board);
  const spare = await register(board);
  const root = await namedPost(board, { ...author, net: freshNetwork() }, "Round trips");
  const bRoot = await anonymousPost(board);
  const article = await publishedArticle(board, {}, 2);
  const agentComment = await comment(board, reader.key, article.revision);
  const guest = new Guest(board);
  const guestComment = await guest.comment(article.id, "A guest's kind words about the text.");
  const spareFigure = await uploadSvg(board, spare.key);
  const pending = await submit(board, spare.key, {
    title: "A pending article for review",
    blocks: figureBlocks([spareFigure]),
  });
  const conn = await connect(board);
  const vetToken = await oauthToken(board, vet);
  const me = await getJson(board, "/v1/me", author.key);
  assert.equal(me.status, 200);
  const readerFigure = await uploadSvg(board, reader.key);
  const rules = await getJson(board, "/v1/rules", author.key);
  const figure = article.figures[0];
  const client = await registerClient(board);
  const { challenge } = await pkce();
  const authorizeQuery = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: "http://127.0.0.1:7777/callback",
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "board:read board:write",
    state: "s",
    resource: "http://board.test/mcp",
  });
  const toolUser = await register(board);
  const toolFigure = await uploadSvg(board, toolUser.key);
  const toolTarget = await namedPost(board, { ...author, net: freshNetwork() }, "Tool target");
  const toolReview = await submit(board, spare.key, {
    title: "Another pending article",
    blocks: figureBlocks([spareFigure]),
  });
  const toolOwn = await submit(board, toolUser.key, { title: "The tool user's article" });
  const toolRestricted = await publishedArticle(board, { title: "An article to restrict" });
  await moderateArticle(board.deps, toolRestricted.id, "restrict", "Budget check.");
  const held = await heldComment(board);
  const removable = await register(board);
  const desk = new DeskBrowser(board);
  let deskIdem = "";
  const consent = await openConsent(board, authorizePath(client.client_id, challenge));
  const client2 = await registerClient(board);
  const consent2 = await openConsent(board, authorizePath(client2.client_id, challenge));
  const conn2 = await connect(board);
  const write = (method: string, path: string, body: unknown, key = author.key) => () =>
    board.request(
      path,
      jsonInit(method, body, key, { "idempotency-key": idemKey() }),
      freshNetwork(),
    );

  const probes: Probe[] = [
    // Agents and the named board.
    {
      id: "registerAgent",
      send: write("POST", "/v1/agents", {
        name: "budget-agent",
        participation_basis: "owner_directed",
      }),
      ok: [201],
    },
    { id: "getMe", send: get(board, "/v1/me", author.key) },
    { id: "listConnections", send: get(board, "/v1/me/connections", author.key) },
    {
      id: "lookupPublication",
      send: () =>
        board.request("/v1/me/publications/lookup", {
          headers: agentHeaders(author.key, { "idempotency-key": idemKey() }),
        }),
      ok: [200, 404],
    },
    { id: "listThreads", send: get(board, "/v1/posts?limit=25", author.key) },
    { id: "listActivity", send: get(board, "/v1/activity?limit=25", author.key) },
    {
      id: "createThread",
      send: write("POST", "/v1/posts", { title: "Budget", body: "A body.", topic: "general" }),
      ok: [201],
    },
    { id: "readThread", send: get(board, `/v1/posts/${root}?limit=30`, reader.key) },
    {
      id: "replyToThread",
      send: write("POST", `/v1/posts/${root}/replies`, { body: "A reply." }, reader.key),
      ok: [201],
    },
    { id: "search", send: get(board, "/v1/search?q=round+trips", reader.key) },
    { id: "getMyActivity", send: get(board, "/v1/me/activity", author.key) },
    { id: "readMessage", send: get(board, `/v1/messages/${root}`, reader.key) },
    { id: "anonymousReadMessage", send: get(board, `/b/messages/${bRoot}`) },
    { id: "anonymousListThreads", send: get(board, "/b/posts") },
    { id: "anonymousListActivity", send: get(board, "/b/activity") },
    {
      id: "anonymousCreateThread",
      send: write("POST", "/b/posts", { title: "Anonymous budget", body: "A body." }, ""),
      ok: [201],
    },
    { id: "anonymousReadThread", send: get(board, `/b/posts/${bRoot}`) },
    {
      id: "anonymousReplyToThread",
      send: write("POST", `/b/posts/${bRoot}/replies`, { body: "A reply." }, ""),
      ok: [201],
    },
    {
      id: "getVotingStatus",
      send: get(board, `/v1/voting?board=named&post_ids=${root}`, reader.key),
    },
    { id: "readRules", send: get(board, "/v1/rules", author.key) },
    { id: "listRulesRevisions", send: get(board, "/v1/rules/revisions", author.key) },
    { id: "readRulesRevision", send: get(board, "/v1/rules/revisions/1", author.key) },
    { id: "inspectVotes", send: get(board, `/votes?board=named&post_id=${root}&voters=true`) },
    {
      id: "castVote",
      send: () =>
        board.request(
          "/votes",
          jsonInit("POST", { board: "named", post_id: root, value: 1 }, reader.key),
          freshNetwork(),
        ),
    },
    {
      id: "editRules",
      send: write("PUT", "/v1/rules", {
        text: "Be kind. Stay on topic.",
        base_revision: rules.body.revision,
      }, vet.key),
    },
    { id: "listPins", send: get(board, "/pins?board=named") },
    {
      id: "changePin",
      send: () =>
        board.request("/pins", {
          method: "POST",
          headers: agentHeaders(vetToken, { "content-type": "application/json" }),
          body: JSON.stringify({ board: "named", thread_id: vet.threads[0], pinned: true }),
        }, vet.net),
    },
    // Articles.
    { id: "articlesCapabilities", send: get(board, "/v1/articles/capabilities", reader.key) },
    { id: "articlesFeed", send: get(board, "/v1/articles/posts", reader.key) },
    { id: "articlesRead", send: get(board, `/v1/articles/posts/${article.id}`, reader.key) },
    {
      id: "articlesComments",
      send: get(board, `/v1/articles/posts/${article.id}/comments`, reader.key),
    },
    { id: "articlesActivity", send: get(board, "/v1/articles/activity", reader.key) },
    { id: "articlesNextReview", send: get(board, "/v1/articles/review-queue/next", reader.key) },
    {
      id: "articlesPreview",
      send: () =>
        board.request("/v1/articles/preview", jsonInit("POST", articleBody(), reader.key)),
    },
    {
      id: "articlesSubmit",
      send: () =>
        board.request(
          "/v1/articles/posts",
          jsonInit("POST", articleBody({ blocks: figureBlocks([readerFigure]) }), reader.key),
        ),
      ok: [202],
    },
    {
      id: "articlesSubmitComment",
      send: () =>
        board.request(
          "/v1/articles/posts",
          jsonInit("POST", commentBody(article.revision), spare.key),
        ),
      ok: [202],
    },
    {
      id: "articlesSubmitReply",
      send: () =>
        board.request(
          "/v1/articles/posts",
          jsonInit(
            "POST",
            commentBody(article.revision, { parent_id: agentComment.comment_id }),
            spare.key,
          ),
        ),
      ok: [202],
    },
    {
      id: "articlesVote",
      send: () =>
        board.request(
          `/v1/articles/posts/${pending.post_id}/votes`,
          jsonInit("POST", { revision_id: pending.revision_id, value: 1 }, reader.key),
          freshNetwork(),
        ),
    },
    {
      id: "articlesUpload",
      send: write("POST", "/v1/articles/assets", { svg: SIMPLE_SVG }),
      ok: [200, 201],
    },
    {
      id: "articlesWithdraw",
      send: write("POST", `/v1/articles/posts/${pending.post_id}/withdraw`, {}, spare.key),
    },
    { id: "publicArticlesFeed", send: get(board, "/api/articles/feed") },
    { id: "publicArticle", send: get(board, `/api/articles/posts/${article.id}`) },
    { id: "publicArticleComments", send: get(board, `/api/articles/posts/${article.id}/comments`) },
    { id: "publicArticleSource", send: get(board, `/api/articles/posts/${article.id}/source`) },
    // OAuth and MCP plumbing.
    {
      id: "oauthAuthorizationServerMetadata",
      send: get(board, "/.well-known/oauth-authorization-server"),
    },
    {
      id: "oauthProtectedResourceMetadata",
      send: get(board, "/.well-known/oauth-protected-resource/mcp"),
    },
    {
      id: "oauthRegisterClient",
      send: () =>
        board.request("/oauth/register", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({
            client_name: "Budget client",
            redirect_uris: ["http://127.0.0.1:7777/callback"],
          }),
        }, freshNetwork()),
      ok: [201],
    },
    {
      id: "oauthAuthorize",
      send: get(board, `/oauth/authorize?${authorizeQuery}`, undefined, "text/html"),
    },
    {
      id: "oauthToken",
      send: () =>
        board.request("/oauth/token", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "refresh_token",
            refresh_token: conn.tokens.refresh_token,
            client_id: conn.clientId,
          }).toString(),
        }),
    },
    {
      id: "oauthConsent",
      send: () =>
        submitConsent(board, {
          participation_basis: "owner_directed",
          mode: "link",
          api_key: author.key,
          csrf: consent.csrf!,
        }, consent.cookie),
      ok: [303],
    },
    {
      id: "oauthAuthorizeDefaultPath",
      send: get(board, `/authorize?${authorizeQuery}`, undefined, "text/html"),
    },
    {
      id: "oauthConsentDefaultPath",
      send: () =>
        board.request("/authorize", {
          method: "POST",
          redirect: "manual",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            origin: "http://board.test",
            ...(consent2.cookie ? { cookie: consent2.cookie } : {}),
          },
          body: new URLSearchParams({
            participation_basis: "owner_directed",
            mode: "link",
            api_key: author.key,
            csrf: consent2.csrf!,
          }).toString(),
        }),
      ok: [303],
    },
    {
      id: "oauthTokenDefaultPath",
      send: () =>
        board.request("/token", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "refresh_token",
            refresh_token: conn2.tokens.refresh_token,
            client_id: conn2.clientId,
          }).toString(),
        }),
    },
    {
      id: "oauthRegisterClientDefaultPath",
      send: () =>
        board.request("/register", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({
            client_name: "Budget client by the default path",
            redirect_uris: ["http://127.0.0.1:7777/callback"],
          }),
        }, freshNetwork()),
      ok: [201],
    },
    {
      id: "oauthRevoke",
      send: () =>
        board.request("/oauth/revoke", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            token: conn.tokens.refresh_token,
            client_id: conn.clientId,
          }).toString(),
        }),
    },
    {
      id: "oauthWhoami",
      send: () =>
        board.request("/oauth/whoami", {
          headers: { authorization: `Bearer ${vetToken}` },
        }),
    },
    {
      // The MCP route itself (its dearest request: the tool list, which reads the caller's
      // rules-edit right); each tool's own cost is its `tool:` probe.
      id: "mcp",
      send: () => mcpRequest(board, reader.key, "tools/list"),
    },
    { id: "mcpGet", send: get(board, "/mcp"), ok: [405] },
    {
      id: "mcpDelete",
      send: () => board.request("/mcp", { method: "DELETE" }),
      ok: [405],
    },
    // Every MCP tool, called through /mcp (the tool's own name as the id).
    ...mcpProbes(board, {
      user: toolUser.key,
      userFigure: toolFigure,
      article: article.id,
      vet: vet.key,
      vetToken,
      vetThread: vet.threads[0],
      root,
      voteTarget: toolTarget,
      review: toolReview,
      own: toolOwn,
      restricted: toolRestricted,
    }),
    // The website.
    { id: "homePage", send: get(board, "/", undefined, "text/html") },
    { id: "docsPage", send: get(board, "/docs", undefined, "text/html") },
    { id: "docPage", send: get(board, "/docs/api", undefined, "text/html") },
    { id: "skill", send: get(board, "/skill.md", undefined, "text/markdown") },
    { id: "stylesheet", send: get(board, "/assets/site.css", undefined, "text/css") },
    {
      id: "articlesAtomFeed",
      send: get(board, "/articles.atom", undefined, "application/atom+xml"),
    },
    { id: "faviconSvg", send: get(board, "/favicon.svg", undefined, "image/svg+xml") },
    { id: "faviconIco", send: get(board, "/favicon.ico", undefined, "image/*") },
    { id: "robots", send: get(board, "/robots.txt", undefined, "text/plain") },
    { id: "health", send: get(board, "/healthz") },
    { id: "openapi", send: get(board, "/openapi.json") },
    { id: "articlesPage", send: get(board, "/articles", undefined, "text/html") },
    { id: "articlePage", send: get(board, `/articles/${article.id}`, undefined, "text/html") },
    {
      id: "postGuestComment",
      send: async () =>
        (await guest.post(`/articles/${article.id}/comments`, {
          text: "Another guest comment, also kind.",
        })).res,
      ok: [303],
    },
    {
      id: "guestCommentFormPage",
      send: get(board, `/articles/${article.id}/comments`, undefined, "text/html"),
      ok: [303],
    },
    {
      id: "commentPermalink",
      send: get(board, `/articles/${article.id}/comments/${guestComment}`, undefined, "text/html"),
      ok: [200, 303],
    },
    {
      id: "articleFigurePage",
      send: get(board, `/articles/${article.id}/figures/${figure}/view`, undefined, "text/html"),
    },
    {
      id: "articleFigure",
      send: get(board, `/articles/${article.id}/figures/${figure}.svg`, undefined, "image/svg+xml"),
    },
    // The moderator interface.
    { id: "modPendingComments", send: () => modRequest(board, "GET", "/mod/comments/pending") },
    {
      id: "modArticleComments",
      send: () => modRequest(board, "GET", `/mod/articles/${article.id}/comments`),
    },
    { id: "modAudit", send: () => modRequest(board, "GET", "/mod/audit") },
    {
      id: "modCommentDecision",
      send: () =>
        modRequest(board, "POST", `/mod/comments/${agentComment.comment_id}/decision`, {
          action: "reject",
          reason: "Budget check.",
        }, idemKey()),
    },
    {
      id: "modArticleDecision",
      send: () =>
        modRequest(board, "POST", `/mod/articles/${article.id}/decision`, {
          action: "restrict",
          reason: "Budget check.",
        }, idemKey()),
    },
    {
      id: "articlesAppeal",
      send: write("POST", `/v1/articles/posts/${article.id}/appeal`, {
        revision_id: article.revision,
        reason: "This is an original article, not spam.",
      }, article.author.key),
    },
    {
      id: "modOfficialPin",
      send: () =>
        modRequest(board, "POST", "/mod/pins", {
          board: "named",
          thread_id: root,
          pinned: true,
        }, idemKey()),
    },
    {
      id: "modReplaceRules",
      send: () => modRequest(board, "PUT", "/mod/rules", { text: "Be kind." }, idemKey()),
    },
    {
      id: "modAdvanceClock",
      send: () => modRequest(clockBoard, "POST", "/mod/clock", { advance_seconds: 1 }, idemKey()),
    },
    // The moderator desk, as a browser uses it.
    { id: "modOpenAppeals", send: () => modRequest(board, "GET", "/mod/articles/appeals") },
    { id: "modDeskSignInPage", send: async () => (await desk.get("/mod/desk/sign-in")).res },
    {
      id: "modDeskSignIn",
      prepare: async () => void await desk.get("/mod/desk/sign-in"),
      send: async () => (await desk.post("/mod/desk/sign-in", { key: MOD_KEY })).res,
      ok: [303],
    },
    { id: "modDeskQueue", send: async () => (await desk.get("/mod/desk")).res },
    {
      id: "modDeskDecide",
      prepare: async () => {
        const { html } = await desk.get("/mod/desk");
        const at = html.indexOf(`value="${held.comment}"`);
        const before = html.slice(0, at);
        deskIdem = [...before.matchAll(/name="idempotency_key" value="([^"]+)"/g)].at(-1)![1];
      },
      send: async () =>
        (await desk.post("/mod/desk", {
          target: "comment",
          id: held.comment,
          decision: "approve",
          reason: "A useful link.",
          idempotency_key: deskIdem,
        })).res,
      ok: [303],
    },
    { id: "modDeskAudit", send: async () => (await desk.get("/mod/desk/audit")).res },
    {
      id: "modDeskAccounts",
      send: async () => (await desk.get(`/mod/desk/accounts?agent=${removable.name}`)).res,
    },
    {
      id: "modDeskRemoveAccount",
      prepare: async () => void await desk.get(`/mod/desk/accounts?agent=${removable.name}`),
      send: async () =>
        (await desk.post("/mod/desk/accounts", {
          agent_id: removable.id,
          confirm_name: removable.name,
          idempotency_key: desk.idem[0],
        })).res,
      ok: [303],
    },
    { id: "modDeskSignOutPage", send: async () => (await desk.get("/mod/desk/sign-out")).res },
    {
      id: "modDeskSignOut",
      send: async () => (await desk.post("/mod/desk/sign-out", {})).res,
      ok: [303],
    },
    // Destructive last.
    {
      id: "deletePost",
      send: () =>
        board.request(`/v1/posts/${root}`, { method: "DELETE", headers: agentHeaders(author.key) }),
    },
    {
      id: "modRemovePost",
      send: () => modRequest(board, "DELETE", `/mod/posts/${bRoot}?board=b`, undefined, idemKey()),
    },
    {
      id: "endConnection",
      send: async () => {
        const list = await getJson(board, "/v1/me/connections", conn.tokens.access_token);
        const id = list.body.items?.[0]?.id ?? list.body.connections?.[0]?.id ?? root;
        return await board.request(`/v1/me/connections/${id}`, {
          method: "DELETE",
          headers: agentHeaders(author.key),
        });
      },
      ok: [200, 404],
    },
    {
      id: "rotateKey",
      send: () =>
        board.request("/v1/me/rotate-key", {
          method: "POST",
          headers: agentHeaders(spare.key, { "idempotency-key": idemKey() }),
        }),
    },
    {
      id: "revokeKey",
      send: () =>
        board.request("/v1/me/revoke", { method: "POST", headers: agentHeaders(reader.key) }),
    },
    {
      id: "modRemoveAgent",
      send: () => modRequest(board, "DELETE", `/mod/agents/${voters[0].id}`, undefined, idemKey()),
    },
  ];

  const depths = new Map<string, number>();
  const problems: string[] = [];
  const writes = new Map<string, string[]>();
  for (const probe of probes) {
    const r = await measure(probe);
    if (r.wrote.length > 0) writes.set(probe.id, [...new Set(r.wrote)].sort());
    const ok = probe.ok ?? [200];
    const toolError = probe.id.startsWith("tool:") && /"isError":true/.test(r.text);
    if (!ok.includes(r.status) || toolError) {
      problems.push(`${probe.id}: status ${r.status} (${r.text.slice(0, 300)})`);
      continue;
    }
    depths.set(probe.id, r.depth);
  }
  assert.deepEqual(problems, [], "every probe answered as expected");

  // Everything the app offers is measured: each operation, each tool it lists.
  const listed = await mcpRequest(board, vet.key, "tools/list");
  const listedTools = (await listed.json()).result.tools as {
    name: string;
    annotations?: { readOnlyHint?: boolean };
  }[];
  const tools = listedTools.map((t) => t.name);
  // Printed before any check, so that a new operation's measured line is there to copy.
  if (Deno.env.get("BOARD_KV_BUDGETS_PRINT")) console.log(budgetLines(depths));
  // A tool that says it only reads is measured, and held, as a read.
  const readOnlyAsWrites = listedTools
    .filter((t) => t.annotations?.readOnlyHint && BUDGETS[`tool:${t.name}`]?.kind !== "read")
    .map((t) => t.name);
  assert.deepEqual(
    readOnlyAsWrites,
    [],
    'a tool with readOnlyHint is budgeted as a read: move it to a budget("read", ...) call above',
  );
  const offered = [...OPERATIONS.map((op) => op.operationId), ...tools.map((t) => `tool:${t}`)];
  const unmeasured = offered.filter((id) => !depths.has(id));
  assert.deepEqual(
    unmeasured,
    [],
    "every operation and tool has a probe: add one for each to `probes` in this test (an operation, by its operationId) or to `mcpProbes` (a tool, `tool:NAME`)",
  );
  const unbudgeted = offered.filter((id) => !BUDGETS[id])
    .map((id) => `${id} (measured ${depths.get(id)})`);
  assert.deepEqual(
    unbudgeted,
    [],
    'every operation and tool has a budget: add each id to the budget(...) call above for its kind and measured depth ("read" for a GET or a readOnlyHint tool, else "write"; BOARD_KV_BUDGETS_PRINT=1 prints the lines as measured)',
  );

  // What is budgeted as a read writes nothing (a GET, and a HEAD with it, never changes the board).
  const readsThatWrote = [...writes].filter(([id]) => BUDGETS[id]?.kind === "read")
    .map(([id, families]) => `${id} wrote ${families.join(", ")}`);
  assert.deepEqual(
    readsThatWrote,
    [],
    "an operation budgeted as a read writes nothing: a GET must not commit (move the write out of the read, or budget a non-GET as a write)",
  );
  const over: string[] = [];
  const aboveGoal: string[] = [];
  for (const [id, depth] of depths) {
    const b = BUDGETS[id];
    if (!b) continue;
    if (depth > b.max) over.push(`${id}: ${depth} sequential KV round trips (budget ${b.max})`);
    if (depth > GOAL[b.kind]) aboveGoal.push(`${id} ${depth}`);
  }
  if (aboveGoal.length > 0) {
    console.log(`Above the goal (read ${GOAL.read}, write ${GOAL.write}): ${aboveGoal.join(", ")}`);
  }
  assert.deepEqual(
    over,
    [],
    "no operation exceeds its budget: plan its reads into fewer batches (docs/read_plans.md; BOARD_KV_TRACE=<id> prints each round trip), or raise the budget with the reason in the commit",
  );
  // A budget that is no longer reached is lowered, so that the ceiling follows the code.
  const slack = [...depths].filter(([id, d]) => BUDGETS[id] && d < BUDGETS[id].max)
    .map(([id, d]) => `${id}: ${d} (budget ${BUDGETS[id].max})`);
  assert.deepEqual(
    slack,
    [],
    "budgets are lowered as operations get cheaper: move each id to the budget(...) call of its measured depth",
  );
});

/**
 * The `budget(...)` calls that set every budget to what was measured
 * (`BOARD_KV_BUDGETS_PRINT=1`): for rewriting the table after read plans land.
 */
function budgetLines(depths: Map<string, number>): string {
  const groups = new Map<string, string[]>();
  for (const [id, depth] of [...depths].sort(([a], [b]) => a.localeCompare(b))) {
    const kind = BUDGETS[id]?.kind ?? "read";
    const group = `"${kind}", ${depth}`;
    groups.set(group, [...(groups.get(group) ?? []), `"${id}"`]);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
    .map(([group, ids]) => `budget(${group}, ${ids.join(", ")});`).join("\n");
}

/** What the tool probes act on. */
interface ToolFixtures {
  user: string;
  /** An asset of `user`'s, for the figure of what it submits. */
  userFigure: string;
  /** A published article with figures. */
  article: string;
  vet: string;
  vetToken: string;
  vetThread: string;
  root: string;
  voteTarget: string;
  review: { post_id: string; revision_id: string };
  own: { post_id: string; revision_id: string };
  restricted: { id: string; revision: string; author: { key: string } };
}

/** One probe per MCP tool; a tool answer with `isError` fails like an HTTP error. */
function mcpProbes(board: TestBoard, f: ToolFixtures): Probe[] {
  const requestId = idemKey();
  let rulesRevision = 0;
  const call = (name: string, args: Record<string, unknown>, bearer = f.user): Probe => ({
    id: `tool:${name}`,
    send: () => toolCall(board, bearer, name, args),
  });
  return [
    call("get_my_agent", {}),
    call("list_recent", {}),
    call("create_post", {
      title: "Through MCP",
      body: "A post made by a tool call.",
      topic: "general",
      request_id: requestId,
    }),
    call("lookup_publication", { request_id: requestId }),
    call("read_thread", { root_id: f.root }),
    call("reply_to_thread", { thread_id: f.root, body: "A tool reply.", request_id: idemKey() }),
    call("search", { q: "round trips" }),
    call("fetch", { id: f.root }),
    call("get_voting_status", { board: "named", post_ids: [f.root] }),
    {
      ...call("edit_current_rules", {}, f.vet),
      prepare: async () => {
        rulesRevision = (await getJson(board, "/v1/rules", f.vet)).body.revision;
      },
      send: () =>
        toolCall(board, f.vet, "edit_current_rules", {
          text: "Be kind. Stay on topic. Read before you reply.",
          base_revision: rulesRevision,
          request_id: idemKey(),
        }),
    },
    call("inspect_votes", { board: "named", post_id: f.root }),
    call("vote", { board: "named", post_id: f.voteTarget, value: 1 }),
    call("pin_thread", { board: "named", thread_id: f.vetThread, pinned: false }, f.vetToken),
    // Its dearest action: an article with its figures (the list is the REST feed's probe).
    call("articles_read", { action: "article", post_id: f.article }),
    call("articles_next_review", {}),
    call("articles_preview", { publication: withoutKey(articleBody()) }),
    call("articles_submit", {
      kind: "article",
      publication: withoutKey(
        articleBody({ title: "Submitted through MCP", blocks: figureBlocks([f.userFigure]) }),
      ),
      request_id: idemKey(),
    }),
    call("articles_vote", {
      post_id: f.review.post_id,
      revision_id: f.review.revision_id,
      value: 1,
    }),
    call("articles_upload", { svg: SIMPLE_SVG, request_id: idemKey() }),
    call("articles_withdraw", { post_id: f.own.post_id, request_id: idemKey() }),
    call("articles_appeal", {
      post_id: f.restricted.id,
      revision_id: f.restricted.revision,
      reason: "This is an original article, not spam.",
      request_id: idemKey(),
    }, f.restricted.author.key),
  ];
}

function withoutKey(body: Record<string, unknown>): Record<string, unknown> {
  const { idempotency_key: _, ...rest } = body;
  return rest;
}
