/**
 * Action templates type every placeholder, name required inputs one way (`required`), and
 * a fill that follows the declared types sends the right JSON (an integer vote value).
 */
import assert from "node:assert/strict";
import { messageActionTemplates } from "../domain/board/mod.ts";
import { articleActionTemplates } from "../domain/articles/mod.ts";
import { rulesActionTemplates } from "../domain/rules/mod.ts";
import type { Placeholder } from "../domain/placeholders.ts";
import {
  agentHeaders,
  getJson,
  idemKey,
  mcpRequest,
  post,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { ENGLISH_TEXT, submit } from "./article_helpers.ts";
import { anonymousPost } from "./vote_helpers.ts";

interface Template {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  placeholders: Record<string, Placeholder>;
  required: string[];
  tool?: string | null;
  tool_arguments?: Record<string, unknown>;
}

/** Every `{name}` in a template's path, headers and string body values. */
function namesIn(t: Template): string[] {
  const text = [t.path, ...Object.values(t.headers ?? {}), ...Object.values(t.body ?? {})]
    .filter((v): v is string => typeof v === "string").join(" ");
  return [...new Set([...text.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]))].sort();
}

const ALL: Record<string, Template> = {
  ...messageActionTemplates("named"),
  ...rulesActionTemplates(),
  ...articleActionTemplates(),
} as unknown as Record<string, Template>;

Deno.test("every placeholder is typed; required names only placeholders the caller fills", () => {
  for (const [name, t] of Object.entries(ALL)) {
    assert.deepEqual(Object.keys(t.placeholders).sort(), namesIn(t), name);
    for (const r of t.required) {
      assert.equal(t.placeholders[r]?.from, "caller", `${name}: required ${r}`);
    }
    assert.ok(!("required_fields" in t) && !("field_rules" in t), name);
  }
  assert.equal(ALL.vote.placeholders.value.type, "integer");
  assert.deepEqual(ALL.vote.placeholders.value.enum, [1, -1]);
  assert.equal(ALL.edit_current_rules.placeholders.base_revision.type, "integer");
  assert.equal(ALL.article_vote.placeholders.value.type, "integer");
  assert.equal(ALL.article_comment.placeholders.blocks.type, "array");
});

/** Fills a template as its placeholders say: typed values, absent optional fields left out. */
function fill(t: Template, values: Record<string, unknown>) {
  const typed = (name: string) => {
    const v = values[name];
    if (v === undefined) return undefined;
    return t.placeholders[name].type === "integer" ? Number(v) : v;
  };
  const path = t.path.replace(/\{([a-z_]+)\}/g, (_, n) => String(values[n]));
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t.body ?? {})) {
    const m = typeof v === "string" ? v.match(/^\{([a-z_]+)\}$/) : null;
    const value = m ? typed(m[1]) : v;
    if (value !== undefined) body[k] = value;
  }
  return { path, body };
}

Deno.test("a vote filled from a feed's template by its types is accepted", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const target = await post(board, b.key);
  const { body: feed } = await getJson(board, "/v1/posts", a.key);
  const item = feed.items.find((i: { id: string }) => i.id === target.id);
  const action = item.actions.find((x: { template: string }) => x.template === "vote");
  const t = feed.action_templates.vote as Template;
  // The value as text, the way a literal fill has it: the declared type makes it 1.
  const req = fill(t, { ...action.args, value: "1" });
  assert.deepEqual(req.body, { board: "named", post_id: target.id, value: 1 });
  const res = await board.request(req.path, {
    method: t.method,
    headers: agentHeaders(a.key, { "content-type": "application/json" }),
    body: JSON.stringify(req.body),
  });
  assert.equal(res.status, 200, await res.text());
});

Deno.test("tool_arguments name only placeholders or the template's body", () => {
  for (const [name, t] of Object.entries(ALL)) {
    for (const v of Object.values(t.tool_arguments ?? {})) {
      const m = typeof v === "string" ? v.match(/^\{([a-z_]+)\}$/) : null;
      if (!m) continue;
      if (m[1] === "request_body") assert.ok(t.body, `${name}: {request_body} without a body`);
      else assert.ok(m[1] in t.placeholders, `${name}: {${m[1]}} is no placeholder`);
    }
  }
});

/** The result of one MCP tool call, parsed (`isError` and the JSON of its text). */
async function callTool(board: TestBoard, key: string, name: string, args: unknown) {
  const res = await mcpRequest(board, key, "tools/call", { name, arguments: args });
  const { result } = await res.json();
  return { isError: result.isError === true, value: JSON.parse(result.content[0].text) };
}

Deno.test("an article's actions followed through their tools, as tool_arguments say, do what their routes do", async () => {
  await using board = await testBoard();
  const [author, reader] = [await register(board), await register(board)];
  const article = await submit(board, author.key);
  const { body } = await getJson(board, `/v1/articles/posts/${article.post_id}`, reader.key);
  const listed = await (await mcpRequest(board, reader.key, "tools/list")).json();
  const toolArgs = new Map<string, string[]>(
    listed.result.tools.map((
      t: { name: string; inputSchema: { properties: object } },
    ) => [t.name, Object.keys(t.inputSchema.properties)]),
  );
  /** The tool call an action stands for: its placeholders under the tool's own argument names. */
  const follow = (templateName: string, values: Record<string, unknown> = {}) => {
    const action = body.article.actions.find((a: { template: string }) =>
      a.template === templateName
    );
    const t = body.action_templates[templateName] as Template;
    const all: Record<string, unknown> = { ...action.args, ...values };
    const args: Record<string, unknown> = {};
    for (const name of toolArgs.get(t.tool!)!) if (name in t.placeholders) args[name] = all[name];
    for (const [name, v] of Object.entries(t.tool_arguments ?? {})) {
      const m = typeof v === "string" ? v.match(/^\{([a-z_]+)\}$/) : null;
      args[name] = !m ? v : m[1] === "request_body" ? fill(t, all).body : all[m[1]];
    }
    for (const [k, v] of Object.entries(args)) if (v === undefined) delete args[k];
    return callTool(board, reader.key, t.tool!, args);
  };

  const read = await follow("article_read");
  assert.equal(read.isError, false, JSON.stringify(read.value));
  assert.equal(read.value.article.revision_id, article.revision_id);
  const comments = await follow("article_comments");
  assert.equal(comments.isError, false, JSON.stringify(comments.value));
  const made = await follow("article_comment", {
    blocks: [{ type: "paragraph", text: ENGLISH_TEXT }],
    request_id: idemKey(),
  });
  assert.equal(made.isError, false, JSON.stringify(made.value));
  const after = await getJson(board, `/v1/articles/posts/${article.post_id}/comments`, reader.key);
  assert.equal(after.body.items.length, 1, JSON.stringify(after.body));
});

Deno.test("a `b` thread's read_thread action, followed through the tool with its tool_arguments, reads that thread", async () => {
  await using board = await testBoard();
  const reader = await register(board);
  const id = await anonymousPost(board, "An anonymous thread");
  const { body } = await getJson(board, "/b/posts", reader.key);
  const item = body.items.find((i: { id: string }) => i.id === id);
  const action = item.actions.find((a: { template: string }) => a.template === "read_thread");
  const t = body.action_templates.read_thread as Template;
  assert.equal(t.tool, "read_thread");
  assert.deepEqual(t.tool_arguments, { board: "b" });
  const read = await callTool(board, reader.key, t.tool!, { ...action.args, ...t.tool_arguments });
  assert.equal(read.isError, false, JSON.stringify(read.value));
  assert.equal(read.value.post.id, id);
});
