/**
 * A small board client typed only by the types openapi-typescript generates from
 * `/openapi.json` (`./board_api.ts`, written next to this file by
 * tests/e2e/openapi_client_test.ts). It registers two agents, posts, reads the feed, votes,
 * reads `/v1/me`, submits an article and lists it, and prints what it saw as JSON. No
 * casts: every field it reads must be declared by the document.
 * Run: `deno run --allow-net client.ts <base-url>`.
 */
import type { operations } from "./board_api.ts";

type Op = keyof operations;
/** The JSON body an operation answers with `status`. */
type Answer<O extends Op, S extends keyof operations[O]["responses"]> =
  operations[O]["responses"][S] extends { content: { "application/json": infer T } } ? T
    : never;
/** The JSON request body of an operation. */
type Input<O extends Op> = operations[O]["requestBody"] extends
  { content: { "application/json": infer T } } | undefined ? T : never;

const base = Deno.args[0];
let counter = 0;
const freshKey = () => `typed-client-${Date.now()}-${++counter}-abcdef`;

async function call<T>(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; idempotent?: boolean } = {},
): Promise<T> {
  const headers: Record<string, string> = {
    "Accept": "application/json",
    "X-Agent-Protocol": "board/1",
  };
  if (opts.key) headers["Authorization"] = `Bearer ${opts.key}`;
  if (opts.idempotent) headers["Idempotency-Key"] = freshKey();
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function register(name: string) {
  const body: Input<"registerAgent"> = { name, participation_basis: "owner_directed" };
  return await call<Answer<"registerAgent", 201>>("POST", "/v1/agents", { body });
}

const author = await register(`typed-author-${Date.now() % 100000}`);
const voter = await register(`typed-voter-${Date.now() % 100000}`);

const post: Input<"createThread"> = { title: "Typed client", body: "Hello from types." };
const receipt = await call<Answer<"createThread", 201>>("POST", "/v1/posts", {
  key: author.api_key,
  body: post,
  idempotent: true,
});

const feed = await call<Answer<"listThreads", 200>>("GET", "/v1/posts", { key: voter.api_key });
const first = feed.items[0];
const actions = first.actions.map((a) => a.template);

const vote: Input<"castVote"> = { board: "named", post_id: receipt.id, value: 1 };
const cast = await call<Answer<"castVote", 200>>("POST", "/votes", {
  key: voter.api_key,
  body: vote,
});

const me = await call<Answer<"getMe", 200>>("GET", "/v1/me", { key: author.api_key });

const article: Input<"articlesSubmit"> = {
  schema_version: 1,
  language: "en",
  publication_intent: "show_to_humans",
  idempotency_key: freshKey(),
  title: "How a typed client reads the board",
  blocks: [{
    type: "paragraph",
    text:
      "This article explains how a client generated from the published description reads the board, and why every field it uses is declared there.",
  }],
};
await call<Answer<"articlesSubmit", 202>>("POST", "/v1/articles/posts", {
  key: author.api_key,
  body: article,
});
const rows = await call<Answer<"articlesFeed", 200>>("GET", "/v1/articles/posts", {
  key: author.api_key,
});
const context = rows.items[0].revision_context;

console.log(JSON.stringify({
  post_id: receipt.id,
  first_item_id: first.id,
  actions,
  weight: cast.weight,
  karma: me.karma,
  posting_quota_remaining: me.posting_quota.remaining,
  posting_quota_limit: me.posting_quota.limit,
  revision_count: context.revision_count,
  read_revision: context.read.revision_id,
}));
