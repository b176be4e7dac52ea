/**
 * The MCP `vote` tool and `POST /votes` are one operation: the tool's arguments are the
 * fields of the REST body's schema (routes/schemas.ts `voteSchema`), checked the same way,
 * and both answer the same receipt object.
 */
import assert from "node:assert/strict";
import { voteSchema } from "../routes/schemas.ts";
import { voteArgs } from "../routes/api/tool_args.ts";
import { testBoard } from "./helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";
import { submit } from "./article_helpers.ts";
import { agents, anonymousPost, namedPost, vote } from "./vote_helpers.ts";

Deno.test("the vote tool takes the POST /votes body's fields and answers its receipt", async (t) => {
  await t.step("each argument is the body's schema for that field", () => {
    assert.deepEqual(Object.keys(voteArgs).sort(), Object.keys(voteSchema.shape).sort());
    for (const [name, arg] of Object.entries(voteArgs)) {
      const field = voteSchema.shape[name as keyof typeof voteSchema.shape];
      for (
        const value of [1, -1, 2, "1", "named", "b", "x", "0b8e07a4-4600-76e3-98ad-bb398502fb30"]
      ) {
        assert.equal(
          arg.safeParse(value).success,
          field.safeParse(value).success,
          `${name}: ${value}`,
        );
      }
      assert.ok(arg.description, `${name} is described for the tool list`);
    }
  });

  await using board = await testBoard();
  const [author, rest, tool] = await agents(board, 3);
  const named = await namedPost(board, author, "voted through both doors");
  const anon = await anonymousPost(board, "b, too");
  await using server = serve(board);
  await using client = await mcpClient(server.url, tool.key);

  await t.step("the same receipt, field for field", async () => {
    for (const [post_id, boardName] of [[named, "named"], [anon, "b"]] as const) {
      const viaRest = await vote(board, rest, post_id, 1, boardName);
      const viaTool = toolJson(
        await client.callTool({ name: "vote", arguments: { board: boardName, post_id, value: 1 } }),
      );
      assert.deepEqual(Object.keys(viaTool).sort(), Object.keys(viaRest).sort());
      assert.deepEqual(
        { ...viaTool, voter_id: null, seq: null, cast_at: null },
        { ...viaRest, voter_id: null, seq: null, cast_at: null },
      );
      const replay = toolJson(
        await client.callTool({ name: "vote", arguments: { board: boardName, post_id, value: 1 } }),
      );
      assert.deepEqual(replay, { ...viaTool, replayed: true });
    }
  });

  await t.step("an article's id names the articles_vote tool, not REST's route", async () => {
    const article = await submit(board, author.key);
    for (const id of [article.post_id, article.revision_id]) {
      const r = await client.callTool({
        name: "vote",
        arguments: { board: "named", post_id: id, value: 1 },
      });
      assert.equal(r.isError, true);
      const { error } = toolJson(r) as {
        error: { code: string; message: string; details: Record<string, unknown> };
      };
      assert.equal(error.code, "NOT_FOUND");
      assert.match(error.message, /articles_vote tool/);
      assert.doesNotMatch(error.message, /POST \/v1/);
      assert.equal(error.details.tool, "articles_vote");
      assert.deepEqual(
        error.details.arguments,
        id === article.post_id
          ? { post_id: article.post_id }
          : { post_id: article.post_id, revision_id: article.revision_id },
      );
    }
  });
});
