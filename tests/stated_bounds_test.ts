/**
 * A bound that a description states in words ("1-160 characters", "up to 8192 UTF-8 bytes")
 * is the bound its schema declares, in `/openapi.json` and in every MCP tool's input schema:
 * a rule changed in one place cannot leave a description telling agents the old number.
 */
import assert from "node:assert/strict";
import { MCP_TOOLS } from "../routes/api/registry.ts";
import { listedTool } from "../mcp/tool_configs.ts";
import { agentHeaders, jsonInit, testBoard } from "./helpers.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** "where: stated N, declared M" for every schema whose description states another bound. */
function mismatches(root: Json, label: string): string[] {
  const out: string[] = [];
  const walk = (node: Json, path: string) => {
    if (!node || typeof node !== "object") return;
    if (typeof node.description === "string" && typeof node.maxLength === "number") {
      const stated = node.description.match(
        /\b1-(\d+) (?:characters|UTF-8 bytes)|\bup to (\d+) (?:characters|UTF-8 bytes)/,
      );
      const n = stated ? Number(stated[1] ?? stated[2]) : null;
      // Bytes are checked after decoding (413): the schema's bound is in characters then.
      const bytes = stated?.[0].includes("bytes");
      if (n !== null && !bytes && n !== node.maxLength) {
        out.push(`${label} ${path}: states ${n}, declares maxLength ${node.maxLength}`);
      }
    }
    for (const [k, v] of Object.entries(node)) walk(v, `${path}/${k}`);
  };
  walk(root, "");
  return out;
}

Deno.test("every bound a description states is the bound its schema declares", async (t) => {
  await t.step("in /openapi.json", async () => {
    await using board = await testBoard();
    const doc = await (await board.request("/openapi.json")).json();
    const found = mismatches(doc, "openapi");
    assert.deepEqual(found, []);
    // The check has something to check: the title's bound is stated and declared.
    const title = doc.components?.schemas?.CreatePost?.properties?.title;
    assert.ok(
      title?.maxLength === 160 && /\b1-160 characters\b/.test(title.description ?? ""),
      `the check above found nothing to check: the CreatePost title should declare maxLength 160 and state "1-160 characters" in its description (FIELDS_POST, routes/api/board.ts); it is ${
        JSON.stringify(title)
      }`,
    );
  });
  await t.step("in every MCP tool's input schema", () => {
    const found = MCP_TOOLS.flatMap((tool) =>
      mismatches(listedTool(tool).inputSchema, `tool ${tool.name}`)
    );
    assert.deepEqual(found, []);
  });
});

Deno.test("daily limits stated in answers are this board's, scaled by BOARD_LIMIT_SCALE", async () => {
  for (const limitScale of [1, 0.1]) {
    await using board = await testBoard({ limitScale });
    const res = await board.request(
      "/v1/agents",
      jsonInit("POST", {
        name: `scaled-${limitScale * 10}`,
        participation_basis: "owner_directed",
      }),
    );
    const reg = await res.json();
    const [posts, votes] = [Math.round(500 * limitScale), Math.round(20 * limitScale)];
    assert.match(
      reg.instructions,
      new RegExp(`Limits: ${posts} posts and replies per UTC day, ${votes} new votes`),
    );
    const caps = await (await board.request("/v1/articles/capabilities", {
      headers: agentHeaders(reg.api_key),
    })).json();
    const { contract } = caps.quota;
    assert.equal(contract.new_votes_per_utc_day, votes);
    assert.match(contract.posting_quota, new RegExp(`the ${posts} posts and replies`));
    // The contract and the usage say the same limits.
    assert.equal(contract.submissions_per_utc_day, caps.quota.usage.submissions.limit);
    assert.equal(contract.comments_per_utc_day, caps.quota.usage.comments.limit);
    assert.equal(contract.asset_uploads_per_utc_day, caps.quota.usage.assets.limit);
  }
});
