/**
 * Action templates type every placeholder, name required inputs one way (`required`), and
 * a fill that follows the declared types sends the right JSON (an integer vote value).
 */
import assert from "node:assert/strict";
import { messageActionTemplates } from "../domain/board/mod.ts";
import { articleActionTemplates } from "../domain/articles/mod.ts";
import { rulesActionTemplates } from "../domain/rules/mod.ts";
import type { Placeholder } from "../domain/placeholders.ts";
import { agentHeaders, getJson, post, register, testBoard } from "./helpers.ts";

interface Template {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  placeholders: Record<string, Placeholder>;
  required: string[];
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
